package grpcapi

import (
	"context"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/logtest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/server/call"
)

// callContext is the context grpc-go gives a call of method.
func callContext(method string) context.Context {
	return grpc.NewContextWithServerTransportStream(context.Background(), methodStream{method: method})
}

// methodStream is the part of a transport stream the interceptors use.
type methodStream struct {
	grpc.ServerTransportStream
	method string
}

func (s methodStream) Method() string { return s.method }

// SetHeader takes the request id the unary interceptor echoes.
func (methodStream) SetHeader(metadata.MD) error { return nil }

// panicStream is the one part of a server stream the recovery reads.
type panicStream struct{ grpc.ServerStream }

func (panicStream) Context() context.Context { return callContext("/test.Svc/Watch") }

// TestRecoveryInterceptors: a panic in a unary (Get) or a streaming (Watch)
// method is an Internal status and a log line with the method and the
// stack, not a crashed server.
func TestRecoveryInterceptors(t *testing.T) {
	unary := (&unaryCalls{admit: func(context.Context, func() int64) (func(), error) { return func() {}, nil }}).intercept
	stream := recoveryStream()
	calls := map[string]func() error{
		"Get": func() error {
			ctx := call.WithCaller(callContext("/test.Svc/Get"), call.Caller{AccountID: 1})
			_, err := unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/test.Svc/Get"},
				func(context.Context, any) (any, error) { panic("Get boom") })
			return err
		},
		"Watch": func() error {
			return stream(nil, panicStream{}, &grpc.StreamServerInfo{},
				func(any, grpc.ServerStream) error { panic("Watch boom") })
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			logs := logtest.Capture(t)
			if st := status.Convert(call()); st.Code() != codes.Internal || st.Message() != "internal error" {
				t.Errorf("status %v %q, want Internal", st.Code(), st.Message())
			}
			if want := `"msg":"panic","panic":"` + name + ` boom","method":"/test.Svc/` + name + `","stack":"goroutine `; !strings.Contains(logs.String(), want) {
				t.Errorf("logged %s, want %s", logs, want)
			}
		})
	}
}
