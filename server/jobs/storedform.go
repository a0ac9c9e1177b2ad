package jobs

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// This file maps an import's jobs between the API's messages and the
// store's own stored form, field by field as domain.JobFieldList() lists
// them.

// ErrUnreadablePayload marks an import whose stored jobs cannot be decoded.
var ErrUnreadablePayload = errors.New("unreadable payload")

// StoredForm is the stored form of an import's jobs.
func StoredForm(jobs []*restv2.JobInput) (store.ImportPayload, error) {
	return store.EncodePayload(len(jobs), func(i int, stored *store.ImportJob) *store.ImportJob {
		in := jobs[i]
		for f, place := range textPlaces {
			if fields[f].Kind == domain.WordsField {
				stored.Fields[f].List = *place.list.In(in)
			} else {
				stored.Fields[f].Text = *place.scalar.In(in)
			}
		}
		for _, x := range in.ExtraFields {
			stored.ExtraFields = append(stored.ExtraFields, store.ImportExtraField{Name: x.GetName(), Value: x.Value})
		}
		for _, x := range in.RepeatedFields {
			stored.RepeatedFields = append(stored.RepeatedFields, store.ImportExtraField{Name: x.GetName(), Value: x.Value})
		}
		return stored
	})
}

// errChunkRefused stops a payload's decoding when a chunk's work fails.
var errChunkRefused = errors.New("chunk refused")

// importChunks decodes a stored payload, in either of its forms, and calls
// work with its jobs in order, size at a time, with the request index of
// the first; the payload is never decoded whole. It returns work's error
// as it is, and an error wrapping ErrUnreadablePayload when the payload
// cannot be decoded.
func importChunks(p store.ImportPayload, size int, work func(offset int, jobs []*restv2.JobInput) error) error {
	if data, ok := p.Proto(); ok {
		var req restv2.PostJobsRequest
		if err := proto.Unmarshal(data, &req); err != nil {
			return fmt.Errorf("%w: decode import payload: %w", ErrUnreadablePayload, err)
		}
		for start := 0; start < len(req.Jobs); start += size {
			if err := work(start, req.Jobs[start:min(start+size, len(req.Jobs))]); err != nil {
				return err
			}
		}
		return nil
	}
	var workErr error
	offset := 0
	chunk := make([]*restv2.JobInput, 0, size)
	flush := func() error {
		if workErr = work(offset, chunk); workErr != nil {
			return errChunkRefused
		}
		offset += len(chunk)
		// A new array: work may keep the jobs it was given.
		chunk = make([]*restv2.JobInput, 0, size)
		return nil
	}
	err := p.EachJob(func(s *store.ImportJob) error {
		chunk = append(chunk, jobInput(s))
		if len(chunk) == size {
			return flush()
		}
		return nil
	})
	if err == nil && len(chunk) > 0 {
		err = flush()
	}
	switch {
	case workErr != nil:
		return workErr
	case err != nil:
		return fmt.Errorf("%w: %w", ErrUnreadablePayload, err)
	}
	return nil
}

// jobInput is the API's form of a stored job.
func jobInput(s *store.ImportJob) *restv2.JobInput {
	in := &restv2.JobInput{}
	for f, place := range textPlaces {
		if fields[f].Kind == domain.WordsField {
			*place.list.In(in) = s.Fields[f].List
		} else {
			*place.scalar.In(in) = s.Fields[f].Text
		}
	}
	for _, x := range s.ExtraFields {
		in.ExtraFields = append(in.ExtraFields, &restv2.ExtraField{Name: x.Name, Value: x.Value})
	}
	for _, x := range s.RepeatedFields {
		in.RepeatedFields = append(in.RepeatedFields, &restv2.ExtraField{Name: x.Name, Value: x.Value})
	}
	return in
}

// StoredJobCount counts a stored payload's jobs, including those that do not
// decode.
func StoredJobCount(p store.ImportPayload) int32 {
	if data, ok := p.Proto(); ok {
		return countJobs(data)
	}
	return int32(p.JobCount())
}

// protoPayloadJobs is the field number of the jobs in a payload of the
// protobuf form: the number PostJobsRequest.jobs had when such payloads
// were written, fixed here so that counting them does not follow the message.
const protoPayloadJobs protowire.Number = 1

// countJobs counts the jobs in a payload of the protobuf form without
// decoding them, so that a payload whose jobs cannot be decoded is counted
// too; it stops at the first field it cannot read.
func countJobs(payload []byte) int32 {
	var n int32
	for len(payload) > 0 {
		num, typ, size := protowire.ConsumeField(payload)
		if size < 0 {
			break
		}
		if num == protoPayloadJobs && typ == protowire.BytesType {
			n++
		}
		payload = payload[size:]
	}
	return n
}
