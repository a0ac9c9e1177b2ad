package main

import "sync/atomic"

// atomicBool is a flag set once by one goroutine and read by others.
type atomicBool struct{ v atomic.Bool }

func (b *atomicBool) set()      { b.v.Store(true) }
func (b *atomicBool) get() bool { return b.v.Load() }
