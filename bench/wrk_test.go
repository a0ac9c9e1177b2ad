package main

import (
	"testing"
	"time"
)

func TestParseWrk(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      wrkResult
		fails     bool
	}{
		{name: "clean run", out: "Running 2s test @ http://127.0.0.1:1\n" +
			"wrk-result requests=2000 duration_us=2000000 connect=0 read=0 write=0 status=0 timeout=0 p50_us=900 p99_us=4100 max_us=9000\n",
			want: wrkResult{requests: 2000, elapsed: 2 * time.Second, median: 900 * time.Microsecond,
				p99: 4100 * time.Microsecond, max: 9 * time.Millisecond}},
		{name: "errors named by kind", out: "wrk-result requests=10 duration_us=1000000 connect=0 read=2 write=0 status=3 timeout=0 p50_us=1 p99_us=2 max_us=3\n",
			want: wrkResult{requests: 10, errors: 5, firstError: "wrk errors: 2 of read, 3 of status", elapsed: time.Second,
				median: time.Microsecond, p99: 2 * time.Microsecond, max: 3 * time.Microsecond}},
		{name: "no result line", out: "unable to connect to 127.0.0.1:1 Connection refused\n", fails: true},
		{name: "no duration", out: "wrk-result requests=0 duration_us=0\n", fails: true},
		{name: "not a number", out: "wrk-result requests=x\n", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWrk(tc.out)
			if tc.fails {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
