package main

import (
	"strings"
	"testing"
)

func TestGCHeapFloorSetting(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  uint64
		err   string
	}{
		{defaultGCHeapFloorMiB, 32 << 20, ""},
		{"0", 0, ""},
		{"1048576", 1 << 40, ""},
		{"1048577", 0, `JOBBOARD_GC_HEAP_FLOOR_MIB: "1048577" is not a whole number of MiB from 0 (off) to 1048576`},
		{"-1", 0, `JOBBOARD_GC_HEAP_FLOOR_MIB: "-1" is not a whole number`},
		{"64MiB", 0, `JOBBOARD_GC_HEAP_FLOOR_MIB: "64MiB" is not a whole number`},
		{"", 0, `JOBBOARD_GC_HEAP_FLOOR_MIB: "" is not a whole number`},
	} {
		t.Run(tt.value, func(t *testing.T) {
			cfg := config{gcHeapFloor: tt.value}
			got, err := cfg.gcHeapFloorBytes()
			switch {
			case tt.err == "" && (err != nil || got != tt.want):
				t.Errorf("%d bytes, error %v; want %d bytes", got, err, tt.want)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want one containing %q", err, tt.err)
			}
		})
	}
}
