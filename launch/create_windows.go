package launch

import (
	"errors"
	"os"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procThreadAttributeJobList is PROC_THREAD_ATTRIBUTE_JOB_LIST (Windows 10
// 1607 and later): the new process is a member of the listed jobs from the
// instant it exists, inside the one NtCreateUserProcess call (Wine 8 does the
// same in its wineserver's new_process request).
const procThreadAttributeJobList = 0x0002000D

// createSpec is what createProcess starts.
type createSpec struct {
	program   string     // absolute path, CreateProcess's lpApplicationName
	cmdLine   string     // verbatim command line
	env       []string   // the child's whole environment
	dir       string     // working directory; "" for this process's
	flags     uint32     // creation flags (CREATE_SUSPENDED is added)
	stdio     [3]uintptr // the child's stdin, stdout and stderr, in this process
	job       windows.Handle
	noJobList bool // as before Windows 10 1607 (tests only)
}

// created is a process createProcess started, suspended.
type created struct {
	windows.ProcessInformation
	inJob bool // created inside spec.job
}

// createProcess starts spec suspended, inheriting exactly its three standard
// handles (PROC_THREAD_ATTRIBUTE_HANDLE_LIST, as os/exec does) and, where
// supported, in spec.job from its creation (PROC_THREAD_ATTRIBUTE_JOB_LIST,
// which os/exec cannot pass); where that is unsupported or refused (a job
// that cannot be nested), outside the job (inJob false).
func createProcess(spec createSpec) (created, error) {
	app, err := windows.UTF16PtrFromString(spec.program)
	if err != nil {
		return created{}, err
	}
	cmdLine, err := windows.UTF16FromString(spec.cmdLine)
	if err != nil {
		return created{}, err
	}
	var dir *uint16
	if spec.dir != "" {
		if dir, err = windows.UTF16PtrFromString(spec.dir); err != nil {
			return created{}, err
		}
	}
	env, err := envBlock(spec.env)
	if err != nil {
		return created{}, err
	}
	// Inheritable duplicates of the three handles, inherited through the
	// handle list alone and closed once the child has its copies.
	self := windows.CurrentProcess()
	var std [3]windows.Handle
	defer func() {
		for _, h := range std {
			if h != 0 {
				windows.CloseHandle(h)
			}
		}
	}()
	for i, h := range spec.stdio {
		if err := windows.DuplicateHandle(self, windows.Handle(h), self, &std[i], 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
			return created{}, os.NewSyscallError("DuplicateHandle", err)
		}
	}

	start := func(job windows.Handle) (created, error) {
		attrs, err := windows.NewProcThreadAttributeList(2)
		if err != nil {
			return created{}, os.NewSyscallError("InitializeProcThreadAttributeList", err)
		}
		defer attrs.Delete()
		if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&std[0]), uintptr(len(std))*unsafe.Sizeof(std[0])); err != nil {
			return created{}, os.NewSyscallError("UpdateProcThreadAttribute", err)
		}
		inJob := false
		if job != 0 && !spec.noJobList {
			// Fails (ERROR_NOT_SUPPORTED) where the attribute is unknown.
			inJob = attrs.Update(procThreadAttributeJobList, unsafe.Pointer(&job), unsafe.Sizeof(job)) == nil
		}
		si := &windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
		si.Cb = uint32(unsafe.Sizeof(*si))
		si.Flags = windows.STARTF_USESTDHANDLES
		si.StdInput, si.StdOutput, si.StdErr = std[0], std[1], std[2]
		flags := spec.flags | windows.CREATE_SUSPENDED | windows.CREATE_UNICODE_ENVIRONMENT | windows.EXTENDED_STARTUPINFO_PRESENT
		c := created{inJob: inJob}
		err = windows.CreateProcess(app, &cmdLine[0], nil, nil, true, flags, &env[0], dir, &si.StartupInfo, &c.ProcessInformation)
		return c, os.NewSyscallError("CreateProcess", err)
	}
	c, err := start(spec.job)
	if err != nil && c.inJob && errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		// The job could not take the child (this process's job forbids
		// nesting): start it outside, for the caller's assignment to try.
		c, err = start(0)
	}
	return c, err
}

// envBlock renders env as CreateProcess's Unicode environment block, sorted
// by name without regard to case as Windows documents (and syscall does).
func envBlock(env []string) ([]uint16, error) {
	if len(env) == 0 {
		return []uint16{0, 0}, nil
	}
	sorted := slices.Clone(env)
	name := func(kv string) string {
		// A name may start with '=' (the per-drive "=C:" variables).
		if len(kv) > 0 {
			if i := strings.IndexByte(kv[1:], '='); i >= 0 {
				kv = kv[:i+1]
			}
		}
		return strings.ToUpper(kv)
	}
	slices.SortStableFunc(sorted, func(a, b string) int { return strings.Compare(name(a), name(b)) })
	var block []uint16
	for _, kv := range sorted {
		s, err := windows.UTF16FromString(kv) // rejects a NUL inside
		if err != nil {
			return nil, err
		}
		block = append(block, s...)
	}
	return append(block, 0), nil
}
