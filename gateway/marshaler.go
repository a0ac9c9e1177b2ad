package gateway

import (
	"bytes"
	"errors"
	"io"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/truckjobs/jobboard/gateway/decode"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// The MIME types the gateway registers its marshalers under. The format
// middleware sets both Content-Type and Accept to one of them from the path
// suffix, which is how grpc-gateway picks the marshaler.
const (
	mimeJSON = "application/json"
	mimeXML  = "application/xml"
)

// marshaler is a runtime.Marshaler for one wire format: it writes the
// shapes of docs/api.md and reads request bodies leniently, as it asks.
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
	return render.Message(m.format, v)
}

// Unmarshal fills a request message; an empty body is io.EOF, which the
// gateway treats as a request without body fields.
func (m marshaler) Unmarshal(data []byte, v any) error {
	return m.decode(data, v, deleteByID)
}

// deleteList says what a list of strings in a delete body holds.
type deleteList bool

const (
	deleteByID        deleteList = false
	deleteByReference deleteList = true
)

// decode fills v from a body. The list bodies of the API are top-level
// arrays, so http.yaml maps them onto the request's repeated field (body:
// jobs, ids, reference_numbers) and grpc-gateway hands over a pointer to that
// field. They are decoded through their request message, which is where the
// format's rules for each body live.
func (m marshaler) decode(data []byte, v any, list deleteList) error {
	if len(bytes.TrimSpace(data)) == 0 {
		if _, isImport := v.(*restv2.CreateJobImportRequest); isImport {
			return errors.New(`the body must be a JSON object: {"jobs": [...], "callbackUrl": "...", "deleteJobs": false}`)
		}
		if _, isWebhook := v.(**restv2.WebhookInput); isWebhook {
			return errors.New(decode.WebhookShape)
		}
		if _, isStatus := v.(**restv2.DriverStatusInput); isStatus {
			return errors.New(decode.StatusShape)
		}
		return io.EOF
	}
	switch field := v.(type) {
	case **restv2.WebhookInput:
		*field = &restv2.WebhookInput{}
		return m.decodeMessage(data, *field)
	case **restv2.DriverStatusInput:
		*field = &restv2.DriverStatusInput{}
		return m.decodeMessage(data, *field)
	case *[]*restv2.JobInput:
		req := &restv2.PostJobsRequest{}
		err := m.decodeMessage(data, req)
		*field = req.Jobs
		return err
	case *[]string:
		if list == deleteByReference {
			req := &restv2.DeleteJobsByReferenceRequest{}
			err := m.decodeMessage(data, req)
			*field = req.ReferenceNumbers
			return err
		}
		req := &restv2.DeleteJobsRequest{}
		err := m.decodeMessage(data, req)
		*field = req.Ids
		return err
	}
	return m.decodeMessage(data, v)
}

func (m marshaler) decodeMessage(data []byte, v any) error {
	if m.format == wire.XML {
		return decode.XML(data, v)
	}
	return decode.JSON(data, v)
}

// NewDecoder decodes the whole body. The body the middleware read (and
// checked) is decoded where it lies, not copied again: for a feed of a
// thousand jobs the copy cost as much as a tenth of the post.
func (m marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		if body, ok := r.(*requestBody); ok {
			return m.decodeBody(body, v)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return m.decode(data, v, deleteByID)
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

// decodeBody decodes a body the prepare middleware is reading. The jobs
// of a JSON post or import, the largest bodies there are, are decoded as
// the body arrives, each piece given back once decoded, so that reading
// and decoding overlap and the body is not held beside the jobs it decodes
// to; other bodies are decoded from their bytes in one piece.
func (m marshaler) decodeBody(b *requestBody, v any) error {
	if m.format == wire.JSON && !b.blank() {
		switch field := v.(type) {
		case *restv2.CreateJobImportRequest:
			return decode.JSONFrom(b, field)
		case *[]*restv2.JobInput:
			req := &restv2.PostJobsRequest{}
			err := decode.JSONFrom(b, req)
			*field = req.Jobs
			return err
		}
	}
	data, err := b.bytes()
	if err != nil {
		return err
	}
	return m.decode(data, v, b.list)
}
