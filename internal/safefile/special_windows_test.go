//go:build windows

package safefile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// specialFiles are the Windows cases of TestReadRefusesWhatIsNotARegularFile:
// the NUL device and a named pipe whose server never writes (reading it
// would wait forever).
func specialFiles(t *testing.T, _ string) []readCase {
	name := fmt.Sprintf(`\\.\pipe\cursorkit-safefile-%d-%s`, os.Getpid(), filepath.Base(t.Name()))
	nameW, err := windows.UTF16PtrFromString(name)
	require.NoError(t, err)
	h, err := windows.CreateNamedPipe(nameW, windows.PIPE_ACCESS_DUPLEX,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT, 1, 4096, 4096, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { windows.CloseHandle(h) })
	return []readCase{
		{name: "named pipe whose server never writes", path: name, wantErr: notRegular("a named pipe (FIFO)")},
		{name: "NUL", path: "NUL", wantErr: notRegular("a character device")},
	}
}
