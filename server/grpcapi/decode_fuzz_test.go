package grpcapi

import (
	"testing"

	"github.com/truckjobs/jobboard/internal/grpctest"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// FuzzRequestDecode: whatever bytes a gRPC client sends as a request, the
// codec never fails the call itself (grpc-go would make that Internal) and
// never panics; a message that does not decode is InvalidArgument with a
// BadRequest.
func FuzzRequestDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(grpctest.StringField(6, []byte("Ann\xff")))                                                         // ListDrivers first_name
	f.Add(grpctest.StringField(1, grpctest.StringField(2, []byte("\xc3"))))                                   // PostJobs jobs[0] field 2
	f.Add(append(grpctest.StringField(16, []byte("TX")), grpctest.StringField(3, []byte("\xed\xa0\x80"))...)) // surrogate half
	f.Add([]byte{0x0a, 0xff})                                                                                 // length past the end
	f.Add(protowire.AppendTag(nil, 0, protowire.VarintType))                                                  // field number 0
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, msg := range []proto.Message{&restv2.ListDriversRequest{}, &restv2.PostJobsRequest{}} {
			target := &decodeTarget{Message: msg, limit: maxRequestLimit}
			if err := (requestCodec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(raw)}, target); err != nil {
				t.Fatalf("codec failed the call: %v", err)
			}
			decodeErr := proto.Unmarshal(raw, msg.ProtoReflect().New().Interface())
			if (decodeErr == nil) != (target.err == nil) {
				t.Fatalf("decoding error %v, codec's %v", decodeErr, target.err)
			}
			if target.err != nil && (status.Code(target.err) != codes.InvalidArgument || len(grpctest.Violations(target.err)) != 1) {
				t.Fatalf("codec's error %v, want InvalidArgument with one field violation", target.err)
			}
		}
	})
}
