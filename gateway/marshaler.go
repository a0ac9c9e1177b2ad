package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"

	"jobboard/gateway/wire"
	jobboardv2 "jobboard/gen/jobboard/v2"
)

// The MIME types the gateway registers its marshalers under. The format
// middleware sets both Content-Type and Accept to one of them from the path
// suffix, which is how grpc-gateway picks the marshaler.
const (
	mimeJSON = "application/json"
	mimeXML  = "application/xml"
)

// marshaler is a runtime.Marshaler for one wire format: it writes the
// contract's shapes and reads request bodies leniently, as the contract asks.
type marshaler struct {
	format wire.Format
}

var _ runtime.Marshaler = marshaler{}

// ContentType is the response's Content-Type.
func (m marshaler) ContentType(any) string {
	if m.format == wire.XML {
		return mimeXML + "; charset=utf-8"
	}
	return mimeJSON + "; charset=utf-8"
}

// Marshal renders a response message.
func (m marshaler) Marshal(v any) ([]byte, error) {
	msg, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot render %T", v)
	}
	return render(m.format, msg)
}

// Unmarshal fills a request message; an empty body is io.EOF, which the
// gateway treats as a request without body fields.
func (m marshaler) Unmarshal(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		if _, isImport := v.(*jobboardv2.CreateJobImportRequest); isImport {
			return errors.New(`the body must be a JSON object: {"jobs": [...], "callbackUrl": "...", "deleteJobs": false}`)
		}
		return io.EOF
	}
	if m.format == wire.XML {
		return decodeXML(data, v)
	}
	return decodeJSON(data, v)
}

// NewDecoder reads the whole body (already size-checked by the middleware).
func (m marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return m.Unmarshal(data, v)
	})
}

// NewEncoder writes rendered messages to w.
func (m marshaler) NewEncoder(w io.Writer) runtime.Encoder {
	return runtime.EncoderFunc(func(v any) error {
		b, err := m.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}
