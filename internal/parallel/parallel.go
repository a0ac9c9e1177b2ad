// Package parallel spreads a batch's independent work, such as checking
// each of a post's jobs or an import's applications, over the cores.
package parallel

import (
	"runtime"
	"sync"
)

// minPerWorker is the least work items a goroutine is started for: below
// it, starting one costs about what it saves.
const minPerWorker = 64

// For calls work(k) for every k below n, spread over the available
// cores in contiguous chunks; small batches stay on the calling goroutine.
// A panic in a worker is raised again on the calling goroutine, where a
// request's recovery turns it into an error answer instead of a crash.
func For(n int, work func(k int)) {
	workers := min(runtime.GOMAXPROCS(0), n/minPerWorker)
	if workers <= 1 {
		for k := range n {
			work(k)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var panicked any
	chunk := (n + workers - 1) / workers
	for start := 0; start < n; start += chunk {
		wg.Add(1)
		go func(start, end int) {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					mu.Lock()
					panicked = p
					mu.Unlock()
				}
			}()
			for k := start; k < end; k++ {
				work(k)
			}
		}(start, min(start+chunk, n))
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}
