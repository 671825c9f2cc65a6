package settingsapi

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func TestCheckListenAddr(t *testing.T) {
	tests := []struct {
		addr        string
		allowRemote bool
		ok          bool
	}{
		{"127.0.0.1:7878", false, true},
		{"127.0.0.2:0", false, true},
		{"[::1]:7878", false, true},
		{"localhost:7878", false, true},
		{"LOCALHOST:7878", false, true},
		{"[::ffff:127.0.0.1]:7878", false, true},
		{"0.0.0.0:7878", false, false},
		{":7878", false, false},
		{"[::]:7878", false, false},
		{"192.168.1.5:7878", false, false},
		{"example.com:7878", false, false},
		{"localhost.evil.com:7878", false, false},
		{"[fe80::1%lo]:7878", false, false},
		{"0.0.0.0:7878", true, true},
		{":7878", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1:", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := CheckListenAddr(tt.addr, tt.allowRemote)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
		})
	}
}

func TestCheckListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	assert.NoError(t, CheckListener(ln, false))
	assert.NoError(t, CheckListener(ln, true))
}

func TestNewServerSetsTimeouts(t *testing.T) {
	srv := NewServer(nil)
	assert.Equal(t, ReadHeaderTimeout, srv.ReadHeaderTimeout)
	assert.Equal(t, ReadTimeout, srv.ReadTimeout)
	assert.Equal(t, WriteTimeout, srv.WriteTimeout)
	assert.Equal(t, IdleTimeout, srv.IdleTimeout)
	assert.Equal(t, MaxHeaderBytes, srv.MaxHeaderBytes)
}
