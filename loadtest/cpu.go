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
// this machine over a window, sampling the postgres processes it knows
// every 250 ms so that backends that come and go are counted up to their
// last sample, and looking through all of /proc for new ones every 2 s and
// at both ends of the window (a full scan reads every process's name: it
// was 7 % of the load generator's CPU when done every 250 ms). Linux only;
// where /proc cannot be read it measures nothing.
type procCPU struct {
	mu    sync.Mutex
	first map[int]float64 // seconds at first sight in the window
	last  map[int]float64 // seconds at the last sample; its keys are the processes known
	begun bool            // the window's first sample is taken
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
		for tick := 1; ; tick++ {
			select {
			case <-t.C:
				if tick%8 == 0 {
					p.sample()
				} else {
					p.sampleKnown()
				}
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

// sample reads every postgres process's CPU time, finding them all in /proc.
func (p *procCPU) sample() {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			p.read(pid)
		}
	}
	p.mu.Lock()
	p.begun = true
	p.mu.Unlock()
}

// sampleKnown reads the CPU time of the postgres processes seen before.
func (p *procCPU) sampleKnown() {
	p.mu.Lock()
	pids := make([]int, 0, len(p.last))
	for pid := range p.last {
		pids = append(pids, pid)
	}
	p.mu.Unlock()
	for _, pid := range pids {
		p.read(pid)
	}
}

// read records the CPU time of process pid when it is a postgres process
// (the name in its stat line); a process gone, or its pid now another
// program's, keeps its last sample.
func (p *procCPU) read(pid int) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return
	}
	// "pid (comm) state …": utime and stime are fields 14 and 15, the
	// 12th and 13th after the ")" that closes comm.
	s := string(stat)
	open, i := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || i < open || s[open+1:i] != "postgres" {
		return
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	secs := (ut + st) / clockTicks
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.first[pid]; !ok {
		// A process first seen after the window's first sample started
		// in the window: all its CPU counts.
		if p.begun {
			p.first[pid] = 0
		} else {
			p.first[pid] = secs
		}
	}
	if secs >= p.last[pid] {
		p.last[pid] = secs
	}
}

// selfCPU returns this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
