//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package chat

import "golang.org/x/sys/unix"

// termState is a terminal's settings, to restore after raw mode.
type termState struct{ t unix.Termios }

func getState(fd int) (*termState, error) {
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	return &termState{*t}, nil
}

func setState(fd int, st *termState) error {
	return unix.IoctlSetTermios(fd, ioctlSetTermios, &st.t)
}

// makeRaw puts the terminal in raw mode for line editing and returns the
// settings before. Unlike x/term's MakeRaw it leaves output processing on,
// so that text written while the editor reads (a note, a streamed reply)
// still starts each line at the left margin. Ctrl-C arrives as a key, not
// as SIGINT, so that it can discard a typed line.
func makeRaw(fd int) (*termState, error) {
	old, err := getState(fd)
	if err != nil {
		return nil, err
	}
	t := old.t
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return nil, err
	}
	return old, nil
}

// stopSelf stops the chat's process group as Ctrl-Z does in a shell (the
// editor's raw mode reads Ctrl-Z as a key, not as the signal); it returns
// once the shell continues the job (fg). An orphaned process group is not
// stopped: it then returns at once.
func stopSelf() error { return unix.Kill(0, unix.SIGTSTP) }
