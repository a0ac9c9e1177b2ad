package logbuf_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/internal/logbuf"
)

// BenchmarkAccessLine writes access-line-sized lines to a file, straight
// and through a Writer: the difference is the system call a line saves.
func BenchmarkAccessLine(b *testing.B) {
	line := []byte(strings.Repeat("x", 250) + "\n")
	for _, c := range []struct {
		name string
		wrap func(f *os.File) (io.Writer, func() error)
	}{
		{"direct", func(f *os.File) (io.Writer, func() error) { return f, func() error { return nil } }},
		{"held", func(f *os.File) (io.Writer, func() error) {
			w := logbuf.New(f, 10*time.Millisecond)
			return w, w.Flush
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			w, flush := c.wrap(f)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := w.Write(line); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if err := flush(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
