// Package syncbuf is a bytes.Buffer safe for concurrent use: what a test
// hands a logger, a server or a child process as its output and reads while
// they still write.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects writes from several goroutines. The zero value is an
// empty buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
