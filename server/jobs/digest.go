package jobs

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"os"
	"sync"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/parallel"
)

// A job's input digest stands for what its checks made of it: a post that
// sends a stored job's input again finds the job unchanged from the digest
// alone, without checking it or reading its stored row (store.Checked).
// The digest covers every value of the v2.0 text form, each with its
// length, and the build that checks it: another build may check the same
// input otherwise, so its digests are its own, and each job's first post
// to it is checked again (and gains that build's digest).

// inputDigests are the input digests of jobs, each nil when the job has
// repeated or unknown members (whose values are reported as ignored, which
// only its checks tell), all nil when this build has no identity.
func inputDigests(jobs []*restv2.JobInput) [][]byte {
	build := buildDigest()
	if build == nil {
		return nil
	}
	digests := make([][]byte, len(jobs))
	sums := make([][sha256.Size]byte, len(jobs))
	parallel.For(len(jobs), func(i int) {
		// Each job's values are written out and hashed in one call,
		// rather than written to the hash one by one, a call each.
		buf := digestBuffers.Get().(*[]byte)
		if in := appendInput(append((*buf)[:0], build...), jobs[i]); in != nil {
			sums[i] = sha256.Sum256(in)
			digests[i] = sums[i][:]
			*buf = in
		}
		digestBuffers.Put(buf)
	})
	return digests
}

var digestBuffers = sync.Pool{New: func() any { return new([]byte) }}

// appendInput appends a job's values to b, each with its length, or
// returns nil for a job with repeated or unknown members.
func appendInput(b []byte, in *restv2.JobInput) []byte {
	if len(in.RepeatedFields) > 0 || len(in.ExtraFields) > 0 {
		return nil
	}
	value := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for f, place := range textPlaces {
		if fields[f].Kind == domain.WordsField {
			list := *place.list.In(in)
			b = binary.AppendUvarint(b, uint64(len(list)))
			for _, v := range list {
				value(v)
			}
			continue
		}
		if v := *place.scalar.In(in); v != nil {
			b = append(b, 1)
			value(*v)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// buildDigest is the digest of the running executable, which names the
// build that checks jobs; nil when it cannot be read, which leaves every
// post to its checks.
var buildDigest = sync.OnceValue(func() []byte {
	path, err := os.Executable()
	if err != nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil
	}
	return h.Sum(nil)
})
