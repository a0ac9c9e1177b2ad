package grpcapi

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/grpctest"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

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

func TestRequestLimitsTable(t *testing.T) {
	if maxRequestLimit != rules.JobImportLimit {
		t.Errorf("server receive limit %d, want the largest method's %d", maxRequestLimit, rules.JobImportLimit)
	}
	if got := requestLimit(jobboardv2.DriverService_ListDrivers_FullMethodName); got != rules.DefaultLimit {
		t.Errorf("ListDrivers limit %d, want the default %d", got, rules.DefaultLimit)
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
			grpctest.PadTo(t, m, size, grpctest.WithPadding(m))
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

// TestOpenMethodsKeepTheDefaultLimit: health, which needs no credentials,
// is refused a message over rules.DefaultLimit before decoding it.
func TestOpenMethodsKeepTheDefaultLimit(t *testing.T) {
	f := newOpenServer(t)
	conn := f.conn(t, "127.0.0.1")
	body := grpctest.StringField(1, make([]byte, rules.DefaultLimit))
	var out []byte
	err := conn.Invoke(context.Background(), "/grpc.health.v1.Health/Check", &body, &out, grpc.ForceCodecV2(grpctest.RawCodec{}))
	if st := status.Convert(err); st.Code() == codes.OK || !strings.Contains(st.Message(), "larger than the 1 MiB this method takes") {
		t.Errorf("a health check of %d bytes: %v, want it refused for its size", len(body), err)
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
