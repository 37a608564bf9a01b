package loadtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procCPU sums the CPU time (utime + stime) of every postgres process on
// this machine over a window, sampling /proc every 250 ms so that backends
// that come and go are counted up to their last sample. Linux only; where
// /proc cannot be read it measures nothing.
type procCPU struct {
	mu    sync.Mutex
	first map[int]float64 // seconds at first sight in the window
	last  map[int]float64
	begun bool // the window's first sample is taken
	stopc chan struct{}
	done  chan struct{}
}

var clockTicks = 100.0 // USER_HZ on Linux

func (p *procCPU) start() {
	p.first, p.last = map[int]float64{}, map[int]float64{}
	p.stopc, p.done = make(chan struct{}), make(chan struct{})
	p.sample()
	go func() {
		defer close(p.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.sample()
			case <-p.stopc:
				return
			}
		}
	}()
}

// stop ends the window and returns the microseconds of CPU the postgres
// processes used in it.
func (p *procCPU) stop() float64 {
	close(p.stopc)
	<-p.done
	p.sample()
	p.mu.Lock()
	defer p.mu.Unlock()
	var total float64
	for pid, end := range p.last {
		total += end - p.first[pid]
	}
	return total * 1e6
}

func (p *procCPU) sample() {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(d + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// Fields after the ")" that closes comm: state is field 3; utime
		// and stime are fields 14 and 15.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		secs := (ut + st) / clockTicks
		p.mu.Lock()
		if _, ok := p.first[pid]; !ok {
			// A process first seen after the window's first sample started
			// in the window: all its CPU counts.
			if p.begun {
				p.first[pid] = 0
			} else {
				p.first[pid] = secs
			}
		}
		p.last[pid] = secs
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.begun = true
	p.mu.Unlock()
}

// selfCPU returns this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
