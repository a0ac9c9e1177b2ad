package server

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// panicStream is the one part of a server stream the recovery reads.
type panicStream struct{ grpc.ServerStream }

func (panicStream) Context() context.Context { return context.Background() }

// TestRecoveryInterceptors: a panic in a unary or a streaming method is an
// Internal status and a log line with the stack, not a crashed server.
func TestRecoveryInterceptors(t *testing.T) {
	unary, stream := recoveryInterceptors()
	calls := map[string]func() error{
		"unary": func() error {
			_, err := unary(context.Background(), nil, &grpc.UnaryServerInfo{},
				func(context.Context, any) (any, error) { panic("unary boom") })
			return err
		},
		"stream": func() error {
			return stream(nil, panicStream{}, &grpc.StreamServerInfo{},
				func(any, grpc.ServerStream) error { panic("stream boom") })
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			logs := captureLog(t)
			if st := status.Convert(call()); st.Code() != codes.Internal || st.Message() != "internal error" {
				t.Errorf("status %v %q, want Internal", st.Code(), st.Message())
			}
			if want := `"msg":"panic","panic":"` + name + ` boom","stack":"goroutine `; !strings.Contains(logs.String(), want) {
				t.Errorf("logged %s, want %s", logs, want)
			}
		})
	}
}
