package grpcapi

import (
	"context"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
)

// grpc-go answers a request message that does not decode with Internal, a
// server fault, before any interceptor runs. It is the client's fault: a
// string field holding invalid UTF-8, say. So the services' methods decode
// through decodeTarget, which requestCodec fills and which carries the
// decoding error back to the method as InvalidArgument, naming the field.

// decodeTarget is a request message to decode into, sent to method, which
// takes at most limit bytes; err is why it could not be decoded. It embeds
// the message so that anything in grpc-go looking at what is being received
// still sees a proto.Message.
type decodeTarget struct {
	proto.Message
	method string
	limit  int
	err    error
}

// requestCodec is grpc-go's proto codec, except that a decodeTarget's
// decoding error is kept in it rather than returned, and that a message
// over its method's limit (requestLimit) is refused undecoded.
type requestCodec struct{}

func (requestCodec) Name() string { return protocodec.Name }

func (requestCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2(protocodec.Name).Marshal(v)
}

func (requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	base := encoding.GetCodecV2(protocodec.Name)
	t, ok := v.(*decodeTarget)
	if !ok {
		// Health and reflection, which take small messages.
		if data.Len() > rules.DefaultLimit {
			return fmt.Errorf("a request message of %s bytes is larger than the %s this method takes", rules.GroupDigits(data.Len()), rules.MiB(rules.DefaultLimit))
		}
		return base.Unmarshal(data, v)
	}
	if data.Len() > t.limit {
		t.err = tooLarge(t.method, t.limit, data.Len())
		return nil
	}
	if err := base.Unmarshal(data, t.Message); err != nil {
		t.err = decodeError(t.Message.ProtoReflect().Descriptor(), data.Materialize(), err)
	}
	return nil
}

// registerDecoding registers a service whose methods decode their request
// messages through a decodeTarget, so a message that does not decode is
// InvalidArgument and one over the method's limit ResourceExhausted, in
// words naming the limit (limitOf, which for the service is requestLimit).
// A streaming method's limit holds for each message of the stream.
//
// A generated handler returns a decoding error before it calls the
// interceptors; such a call still goes through them here, with the error
// as its answer, so that it has its access log line and its metrics.
func registerDecoding(srv *grpc.Server, desc *grpc.ServiceDesc, impl any, limitOf func(fullMethod string) int) {
	d := *desc
	d.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		handler := m.Handler
		method := "/" + desc.ServiceName + "/" + m.MethodName
		limit := limitOf(method)
		d.Methods[i] = grpc.MethodDesc{MethodName: m.MethodName,
			Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
				// One allocation a call holds what the decoding needs and
				// leaves, rather than a closure and the variables it shares.
				d := &unaryDecoding{dec: dec, target: decodeTarget{method: method, limit: limit}}
				out, err := handler(srv, ctx, d.decode, ic)
				if d.err == nil || ic == nil {
					return out, err
				}
				return ic(ctx, d.received, &grpc.UnaryServerInfo{Server: srv, FullMethod: method},
					func(context.Context, any) (any, error) { return nil, d.err })
			}}
	}
	d.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, sd := range desc.Streams {
		handler := sd.Handler
		method := "/" + desc.ServiceName + "/" + sd.StreamName
		d.Streams[i] = sd
		d.Streams[i].Handler = func(srv any, ss grpc.ServerStream) error {
			return handler(srv, &decodingStream{ServerStream: ss, method: method, limit: limitOf(method)})
		}
	}
	srv.RegisterService(&d, impl)
}

// unaryDecoding decodes a unary call's request message through its target,
// and keeps the message and the decoding error for registerDecoding.
type unaryDecoding struct {
	dec      func(any) error
	target   decodeTarget
	received any
	err      error
}

func (d *unaryDecoding) decode(v any) error {
	d.received = v
	msg, ok := v.(proto.Message)
	if !ok {
		d.err = d.dec(v)
		return d.err
	}
	d.target.Message = msg
	if d.err = d.dec(&d.target); d.err == nil {
		d.err = d.target.err
	}
	return d.err
}

// decodingStream receives a stream's messages through a decodeTarget.
type decodingStream struct {
	grpc.ServerStream
	method string
	limit  int
}

func (s *decodingStream) RecvMsg(m any) error {
	msg, ok := m.(proto.Message)
	if !ok {
		return s.ServerStream.RecvMsg(m)
	}
	t := &decodeTarget{Message: msg, method: s.method, limit: s.limit}
	if err := s.ServerStream.RecvMsg(t); err != nil {
		return err
	}
	return t.err
}

// decodeError explains why raw is not a message of type md: the first
// string field that is not UTF-8, by its path ("first_name",
// "jobs[2].title"), or else the decoder's own words about the request as a
// whole. Values are cut to call.MaxEchoed characters (docs/api.md, Limits against
// abuse).
func decodeError(md protoreflect.MessageDescriptor, raw []byte, err error) error {
	if field, value, ok := invalidUTF8(md, raw, ""); ok {
		return call.InvalidField(field, string(value), "is not valid; values must be UTF-8 text without NUL characters")
	}
	return call.InvalidArgument(call.FieldViolation{Label: "request",
		Description: fmt.Sprintf("not a valid %s message: %v", md.FullName(), err)})
}

// invalidUTF8 walks the wire form of a message and returns the path and
// bytes of the first string field, at any depth, that is not UTF-8. An
// element of a repeated field is named by its index.
func invalidUTF8(md protoreflect.MessageDescriptor, b []byte, prefix string) (string, []byte, bool) {
	seen := map[protowire.Number]int{} // elements of each repeated field so far
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", nil, false
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if typ != protowire.BytesType || fd == nil {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return "", nil, false
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return "", nil, false
		}
		b = b[n:]
		name := prefix + string(fd.Name())
		if fd.IsList() {
			name = fmt.Sprintf("%s[%d]", name, seen[num])
			seen[num]++
		}
		switch fd.Kind() {
		case protoreflect.StringKind:
			if !utf8.Valid(v) {
				return name, v, true
			}
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if fd.IsMap() {
				continue
			}
			if path, bad, ok := invalidUTF8(fd.Message(), v, name+"."); ok {
				return path, bad, true
			}
		}
	}
	return "", nil, false
}
