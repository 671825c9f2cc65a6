package launch

import (
	"bytes"
	"errors"
	"strconv"
)

var errBadStat = errors.New("malformed /proc/<pid>/stat")

// parseProcStat parses a Linux /proc/<pid>/stat line into a proc: the PID,
// the parent PID, the process group and the start time in clock ticks since
// boot. The command name may hold spaces and parentheses, so the fields are
// counted from the last ')'.
func parseProcStat(data []byte) (proc, error) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open <= 0 || closing < open {
		return proc{}, errBadStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil || pid <= 0 {
		return proc{}, errBadStat
	}
	// fields[0] is the state (field 3); starttime is field 22.
	const ppidField, pgrpField, startField = 1, 2, 19
	var ppidText, pgrpText, startText []byte
	rest := data[closing+1:]
	for i := 0; i <= startField; i++ {
		var field []byte
		if field, rest = nextField(rest); field == nil {
			return proc{}, errBadStat
		}
		switch i {
		case ppidField:
			ppidText = field
		case pgrpField:
			pgrpText = field
		case startField:
			startText = field
		}
	}
	ppid, err := strconv.Atoi(string(ppidText))
	if err != nil || ppid < 0 {
		return proc{}, errBadStat
	}
	pgrp, err := strconv.Atoi(string(pgrpText))
	if err != nil || pgrp < 0 {
		return proc{}, errBadStat
	}
	start, err := strconv.ParseUint(string(startText), 10, 64)
	if err != nil {
		return proc{}, errBadStat
	}
	return proc{Pid: pid, PPid: ppid, Group: pgrp, StartTime: start}, nil
}

// nextField returns the first run of non-space bytes of data (ASCII white
// space separates the fields of a stat line) and what follows it; field is
// nil when none is left. Unlike bytes.Fields it allocates nothing: the
// sweep parses one line per process.
func nextField(data []byte) (field, rest []byte) {
	start := 0
	for start < len(data) && isStatSpace(data[start]) {
		start++
	}
	if start == len(data) {
		return nil, nil
	}
	end := start
	for end < len(data) && !isStatSpace(data[end]) {
		end++
	}
	return data[start:end], data[end:]
}

func isStatSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}
