// Package grpctest holds what the gRPC tests of several packages share:
// dialling a test server from a chosen loopback address, sending bytes the
// proto codec would refuse to encode, sizing messages exactly, and reading
// the field violations of an error.
package grpctest

import (
	"context"
	"net"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Dial connects to addr from the loopback address from (127.0.0.x), so a
// test can be several clients; the connection closes when the test ends.
func Dial(t testing.TB, addr, from string) *grpc.ClientConn {
	t.Helper()
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		return d.DialContext(ctx, "tcp", addr)
	}
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithContextDialer(dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// RawCodec sends bytes as they are, so a test can send what the proto
// codec would refuse to encode. Calls pass *[]byte both ways.
type RawCodec struct{}

func (RawCodec) Name() string { return "proto" }
func (RawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (RawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

// StringField is the wire form of one string field holding v.
func StringField(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
}

// PadTo makes msg exactly size bytes on the wire by setting fill's padding
// to the right length. The length's own varint may grow by a byte, so it
// takes a few tries.
func PadTo(t testing.TB, msg proto.Message, size int, fill func(n int)) {
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

// WithPadding gives msg an unknown field of n bytes, which a server
// receives and skips: a message of any size for a method whose fields
// could not hold it.
func WithPadding(msg proto.Message) func(n int) {
	return func(n int) {
		var b []byte
		if n > 0 {
			b = protowire.AppendBytes(protowire.AppendTag(nil, 9999, protowire.BytesType), make([]byte, n))
		}
		msg.ProtoReflect().SetUnknown(b)
	}
}

// Violations lists the field violations of err's BadRequest details as
// "field | description".
func Violations(err error) []string {
	var out []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField()+" | "+v.GetDescription())
			}
		}
	}
	return out
}
