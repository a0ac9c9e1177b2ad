package store

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
)

// The stored form of an import is the store's own: JSON of the types below,
// whose names are fixed by their tags, not by the API's messages. Renaming
// or retyping a field of the API leaves what is stored readable; a change
// of the stored form itself is a change of these types (and, for the
// payload, of its payload_form).

// The payload_form of an import's payload (migration 0011).
const (
	// payloadFormJSON is storedPayload as JSON.
	payloadFormJSON = "json"
	// payloadFormProto is the jobs.v2 PostJobsRequest in protobuf binary,
	// which imports queued before the store owned the form still hold.
	payloadFormProto = "proto"
)

// ImportJob is one job of an import as it was sent: nothing is checked or
// made canonical until the import runs. Nil is a field that was not sent.
type ImportJob struct {
	ReferenceNumber *string            `json:"referenceNumber,omitempty"`
	Title           *string            `json:"title,omitempty"`
	City            *string            `json:"city,omitempty"`
	State           *string            `json:"state,omitempty"`
	PostalCode      *string            `json:"postalCode,omitempty"`
	DriverType      *string            `json:"driverType,omitempty"`
	Preference      *string            `json:"preference,omitempty"`
	FreightType     *string            `json:"freightType,omitempty"`
	PayAmountMin    *string            `json:"payAmountMin,omitempty"`
	PayAmountMax    *string            `json:"payAmountMax,omitempty"`
	PayFrequency    *string            `json:"payFrequency,omitempty"`
	EmploymentType  []string           `json:"employmentType,omitempty"`
	RouteType       []string           `json:"routeType,omitempty"`
	Description     *string            `json:"description,omitempty"`
	Requirements    *string            `json:"requirements,omitempty"`
	TwicOnly        *string            `json:"twicOnly,omitempty"`
	LicenseClass    *string            `json:"licenseClass,omitempty"`
	ExtraFields     []ImportExtraField `json:"extraFields,omitempty"`
}

// ImportExtraField is a field of a sent job that is not one of the job's.
type ImportExtraField struct {
	Name  string  `json:"name"`
	Value *string `json:"value,omitempty"`
}

// storedPayload is the JSON of payload_form json.
type storedPayload struct {
	Jobs []ImportJob `json:"jobs"`
}

// ImportPayload is an import's jobs as stored.
type ImportPayload struct {
	form string
	data []byte
}

// NewImportPayload is the stored form of jobs.
func NewImportPayload(jobs []ImportJob) (ImportPayload, error) {
	// Descriptions are HTML: without SetEscapeHTML(false) every <, > and &
	// would take six bytes, and a payload up to six times its request.
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(storedPayload{Jobs: jobs}); err != nil {
		return ImportPayload{}, fmt.Errorf("encode import payload: %w", err)
	}
	return ImportPayload{form: payloadFormJSON, data: bytes.TrimSuffix(data.Bytes(), []byte("\n"))}, nil
}

// Proto returns the payload of an import queued before the store owned the
// form: a PostJobsRequest in protobuf binary, which the caller decodes.
func (p ImportPayload) Proto() ([]byte, bool) { return p.data, p.form == payloadFormProto }

// ErrProtoPayload is Jobs of a payload in the protobuf form (see Proto).
var ErrProtoPayload = errors.New("import payload stored as protobuf")

// Jobs decodes the payload.
func (p ImportPayload) Jobs() ([]ImportJob, error) {
	if p.form == payloadFormProto {
		return nil, ErrProtoPayload
	}
	// A completed import's payload is emptied: it holds no jobs any more,
	// and a worker that runs it again finds it complete and does nothing.
	if len(p.data) == 0 {
		return nil, nil
	}
	var sp storedPayload
	if err := json.Unmarshal(p.data, &sp); err != nil {
		return nil, fmt.Errorf("decode import payload: %w", err)
	}
	return sp.Jobs, nil
}

// JobCount counts the jobs of a payload in the JSON form without decoding
// them, so that jobs that do not decode count too; 0 when even the list
// cannot be read.
func (p ImportPayload) JobCount() int {
	var list struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	if json.Unmarshal(p.data, &list) != nil {
		return 0
	}
	return len(list.Jobs)
}

// ImportResults are what an import did, as stored once it is complete.
// Imports completed before the store owned the form hold the same names
// (the API's JSON of its results message), so both read alike; unknown
// names are ignored.
type ImportResults struct {
	Added         int32                `json:"added,omitempty"`
	Updated       int32                `json:"updated,omitempty"`
	Unchanged     int32                `json:"unchanged,omitempty"`
	Deleted       int32                `json:"deleted,omitempty"`
	Failed        int32                `json:"failed,omitempty"`
	Processed     int32                `json:"processed,omitempty"`
	Errors        []ImportError        `json:"errors,omitempty"`
	IgnoredValues []ImportIgnoredValue `json:"ignoredValues,omitempty"`
}

// ImportError is a job of an import that could not be saved, or (with no
// reference and Index 0) why none of them could.
type ImportError struct {
	Index           int32    `json:"index,omitempty"`
	Messages        []string `json:"messages,omitempty"`
	ReferenceNumber *string  `json:"referenceNumber,omitempty"`
}

// ImportIgnoredValue is a sent value the import did not use.
type ImportIgnoredValue struct {
	Index *int32 `json:"index,omitempty"`
	// ID is written as a JSON string, as the results of older imports hold it.
	ID              *int64  `json:"id,string,omitempty"`
	ReferenceNumber *string `json:"referenceNumber,omitempty"`
	Field           *string `json:"field,omitempty"`
	Value           *string `json:"value,omitempty"`
	Message         string  `json:"message,omitempty"`
}

// Scan reads the results column.
func (r *ImportResults) Scan(src any) error {
	var data []byte
	switch v := src.(type) {
	case []byte:
		data = v
	case string:
		data = []byte(v)
	default:
		return fmt.Errorf("import results: cannot read %T", src)
	}
	if err := json.Unmarshal(data, r); err != nil {
		return fmt.Errorf("decode import results: %w", err)
	}
	return nil
}

// Value writes the results column. It is text, not []byte: the pool sends
// []byte arguments in binary format (see openPool), which a jsonb
// parameter would read as jsonb's binary form and refuse.
func (r *ImportResults) Value() (driver.Value, error) {
	if r == nil {
		return nil, nil
	}
	b, err := json.Marshal(r)
	return string(b), err
}
