package store

import (
	"os"
	"syscall"
	"unsafe"
)

// mapWALIndex maps the start of the WAL index file read-only and shared,
// so that the header SQLite's writers update is read from the same memory
// they write. It returns nil when the file does not look like a WAL index
// in use, and the Watch then asks PRAGMA data_version instead.
func mapWALIndex(path string) (*walIndexHeader, func() error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close() // the mapping outlives the descriptor
	size := os.Getpagesize()
	if st, err := f.Stat(); err != nil || st.Size() < int64(size) {
		// Reading a mapped page past the end of the file faults.
		return nil, nil
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	h := (*walIndexHeader)(unsafe.Pointer(&mem[0]))
	unmap := func() error { return syscall.Munmap(mem) }
	if h.load()[0] != walIndexVersion || mem[12] != 1 { // iVersion, isInit
		unmap()
		return nil, nil
	}
	return h, unmap
}
