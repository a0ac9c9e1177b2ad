package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

func TestTooLargeWords(t *testing.T) {
	for _, tt := range []struct {
		method      string
		limit, size int
		want        string
	}{
		{jobboardv2.JobService_PostJobs_FullMethodName, rules.JobsPostLimit, 17_000_123,
			"PostJobs takes at most 16 MiB (16,777,216 bytes); this message is 17,000,123 bytes"},
		{jobboardv2.JobService_GetJob_FullMethodName, rules.DefaultLimit, 1_572_864,
			"GetJob takes at most 1 MiB (1,048,576 bytes); this message is 1,572,864 bytes"},
		{"/x.S/Half", 3 << 19, 1 << 21, "Half takes at most 1.5 MiB (1,572,864 bytes); this message is 2,097,152 bytes"},
	} {
		st := status.Convert(tooLarge(tt.method, tt.limit, tt.size))
		if st.Code() != codes.ResourceExhausted || st.Message() != tt.want {
			t.Errorf("tooLarge(%s, %d, %d) = %v %q, want %q", tt.method, tt.limit, tt.size, st.Code(), st.Message(), tt.want)
		}
		if q := quotaFailure(st); q == nil || q.GetViolations()[0].GetSubject() != tt.method {
			t.Errorf("tooLarge(%s): QuotaFailure %v, want one naming the method", tt.method, q)
		}
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 16777216: "16,777,216", -1234567: "-1,234,567"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRequestLimitsTable(t *testing.T) {
	if maxRequestLimit != rules.JobImportLimit {
		t.Errorf("server receive limit %d, want the largest method's %d", maxRequestLimit, rules.JobImportLimit)
	}
	if got := requestLimit(jobboardv2.DriverService_ListDrivers_FullMethodName); got != rules.DefaultLimit {
		t.Errorf("ListDrivers limit %d, want the default %d", got, rules.DefaultLimit)
	}
}

func quotaFailure(st *status.Status) *errdetails.QuotaFailure {
	for _, d := range st.Details() {
		if q, ok := d.(*errdetails.QuotaFailure); ok {
			return q
		}
	}
	return nil
}

// padTo makes msg exactly size bytes on the wire by setting fill's padding
// to the right length. The length's own varint may grow by a byte, so it
// takes a few tries.
func padTo(t *testing.T, msg proto.Message, size int, fill func(n int)) {
	t.Helper()
	n := 0
	for range 5 {
		fill(n)
		diff := size - proto.Size(msg)
		if diff == 0 {
			return
		}
		n += diff
	}
	t.Fatalf("cannot pad a %T to %d bytes", msg, size)
}

// jobsRequest is a post of 1,000 valid jobs whose descriptions make it
// exactly size bytes.
func jobsRequest(t *testing.T, size int) *jobboardv2.PostJobsRequest {
	t.Helper()
	req := &jobboardv2.PostJobsRequest{}
	for i := range rules.MaxJobsPerPost {
		req.Jobs = append(req.Jobs, naturalJob(fmt.Sprintf("J%d", i)))
	}
	padTo(t, req, size, func(n int) {
		per := n / len(req.Jobs)
		for i, j := range req.Jobs {
			d := strings.Repeat("d", per)
			if i == 0 {
				d += strings.Repeat("d", n-per*len(req.Jobs))
			}
			j.Description = "Good job " + d
		}
	})
	return req
}

// importRequest is an import of valid jobs whose descriptions make it
// exactly size bytes.
func importRequest(t *testing.T, size int) *jobboardv2.CreateJobImportRequest {
	t.Helper()
	req := &jobboardv2.CreateJobImportRequest{}
	const jobs = 2000 // descriptions of some 33,500 characters
	for i := range jobs {
		req.Jobs = append(req.Jobs, naturalJob(fmt.Sprintf("I%d", i)))
	}
	padTo(t, req, size, func(n int) {
		per := n / jobs
		for i, j := range req.Jobs {
			d := strings.Repeat("d", per)
			if i == 0 {
				d += strings.Repeat("d", n-per*jobs)
			}
			j.Description = "Good job " + d
		}
	})
	return req
}

// withPadding gives msg an unknown field of n bytes, which the server
// receives and skips: a message of any size for a method whose fields
// could not hold it.
func withPadding(msg proto.Message) func(n int) {
	return func(n int) {
		var b []byte
		if n > 0 {
			b = protowire.AppendBytes(protowire.AppendTag(nil, 9999, protowire.BytesType), make([]byte, n))
		}
		msg.ProtoReflect().SetUnknown(b)
	}
}

// TestGRPCTakesWhatRESTTakes: over a real connection, each method accepts a
// request message of exactly its REST limit, and refuses one byte more with
// ResourceExhausted naming the limit (docs/api.md 7.2). Above the largest limit,
// grpc-go's receive limit, the words are grpc-go's, still naming both sizes.
func TestGRPCTakesWhatRESTTakes(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	logs := captureLog(t)
	conn := f.conn(t, "127.0.0.1")
	ctx := withKey(f.a.APIKey)
	jobs := jobboardv2.NewJobServiceClient(conn)
	imports := jobboardv2.NewJobImportServiceClient(conn)
	drivers := jobboardv2.NewDriverServiceClient(conn)
	for _, tt := range []struct {
		name  string
		limit int
		call  func(size int) error
	}{
		{"PostJobs", rules.JobsPostLimit, func(size int) error {
			resp, err := jobs.PostJobs(ctx, jobsRequest(t, size))
			if err == nil && resp.GetAdded()+resp.GetUpdated()+resp.GetUnchanged() != rules.MaxJobsPerPost {
				t.Errorf("a post of %d bytes: %d added, %d updated, %d unchanged, want all %d jobs taken", size,
					resp.GetAdded(), resp.GetUpdated(), resp.GetUnchanged(), rules.MaxJobsPerPost)
			}
			return err
		}},
		{"CreateJobImport", rules.JobImportLimit, func(size int) error {
			_, err := imports.CreateJobImport(ctx, importRequest(t, size))
			return err
		}},
		{"GetJob", rules.DefaultLimit, func(size int) error {
			req := &jobboardv2.GetJobRequest{Id: 1}
			padTo(t, req, size, withPadding(req))
			_, err := jobs.GetJob(ctx, req)
			return err
		}},
		{"ListDrivers", rules.DefaultLimit, func(size int) error {
			req := &jobboardv2.ListDriversRequest{}
			padTo(t, req, size, func(n int) { req.Email = strings.Repeat("e", n) })
			_, err := drivers.ListDrivers(ctx, req)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(tt.limit); status.Code(err) == codes.ResourceExhausted || status.Code(err) == codes.Internal {
				t.Fatalf("a message of %d bytes: %v", tt.limit, err)
			}
			t.Logf("%s: a message of %s bytes is accepted", tt.name, groupDigits(tt.limit))
			sizes := []int{tt.limit + 1}
			switch tt.limit {
			case rules.DefaultLimit:
				sizes = append(sizes, 3<<19)
			case maxRequestLimit:
				sizes = append(sizes, tt.limit+1<<20) // over grpc-go's own limit
			}
			for _, size := range sizes {
				err := tt.call(size)
				st := status.Convert(err)
				if size > maxRequestLimit {
					want := fmt.Sprintf("grpc: received message larger than max (%d vs. %d)", size, maxRequestLimit)
					if st.Code() != codes.ResourceExhausted || st.Message() != want {
						t.Errorf("a message of %d bytes: %v, want ResourceExhausted %q", size, err, want)
					}
					continue
				}
				want := fmt.Sprintf("%s takes at most %s (%s bytes); this message is %s bytes",
					tt.name, mebibytes(tt.limit), groupDigits(tt.limit), groupDigits(size))
				if st.Code() != codes.ResourceExhausted || st.Message() != want || quotaFailure(st) == nil {
					t.Errorf("a message of %d bytes: %v, want ResourceExhausted %q with a QuotaFailure", size, err, want)
				}
			}
			// A refused call has its access log line, as any other.
			line := regexp.MustCompile(`"method":"/[\w.]+/` + tt.name + `","code":"ResourceExhausted"`)
			if !line.MatchString(logs.String()) {
				t.Errorf("no access log line of %s with code ResourceExhausted in\n%s", tt.name, logs.String())
			}
		})
	}
}

// TestOpenMethodsKeepTheDefaultLimit: health, which needs no credentials,
// is refused a message over rules.DefaultLimit before decoding it.
func TestOpenMethodsKeepTheDefaultLimit(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	conn := f.conn(t, "127.0.0.1")
	body := stringField(1, make([]byte, rules.DefaultLimit))
	var out []byte
	err := conn.Invoke(context.Background(), "/grpc.health.v1.Health/Check", &body, &out, grpc.ForceCodecV2(rawCodec{}))
	if st := status.Convert(err); st.Code() == codes.OK || !strings.Contains(st.Message(), "larger than the 1 MiB this method takes") {
		t.Errorf("a health check of %d bytes: %v, want it refused for its size", len(body), err)
	}
}

// uploadDesc is a client-streaming service of the test's own, standing for
// a streaming method of the API: Send counts the messages it receives.
var uploadDesc = grpc.ServiceDesc{
	ServiceName: "jobboard.test.Upload",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{StreamName: "Send", ClientStreams: true,
		Handler: func(_ any, ss grpc.ServerStream) error {
			var n int64
			for {
				var m jobboardv2.GetJobRequest
				err := ss.RecvMsg(&m)
				if errors.Is(err, io.EOF) {
					return ss.SendMsg(&jobboardv2.GetJobRequest{Id: n})
				}
				if err != nil {
					return err
				}
				n++
			}
		}}},
}

// TestStreamMessagesKeepTheirLimit: each message of a streaming method is
// held to the method's limit.
func TestStreamMessagesKeepTheirLimit(t *testing.T) {
	const method, limit = "/jobboard.test.Upload/Send", 2 << 20
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxRequestLimit), grpc.ForceServerCodecV2(requestCodec{}))
	registerDecoding(srv, &uploadDesc, struct{}{}, func(string) int { return limit })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///"+ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(sizes ...int) (int64, error) {
		stream, err := conn.NewStream(context.Background(), &uploadDesc.Streams[0], method)
		if err != nil {
			return 0, err
		}
		for _, size := range sizes {
			m := &jobboardv2.GetJobRequest{Id: 1}
			padTo(t, m, size, withPadding(m))
			if err := stream.SendMsg(m); err != nil {
				break // the server answered already: RecvMsg tells how
			}
		}
		_ = stream.CloseSend()
		var out jobboardv2.GetJobRequest
		err = stream.RecvMsg(&out)
		return out.GetId(), err
	}
	if n, err := send(limit, 10, limit); err != nil || n != 3 {
		t.Errorf("three messages within the limit: %d received, %v", n, err)
	}
	_, err = send(10, limit+1)
	want := "Send takes at most 2 MiB (2,097,152 bytes); this message is 2,097,153 bytes"
	if st := status.Convert(err); st.Code() != codes.ResourceExhausted || st.Message() != want {
		t.Errorf("a message over the limit: %v, want ResourceExhausted %q", err, want)
	}
}
