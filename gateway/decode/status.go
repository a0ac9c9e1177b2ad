package decode

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// A status body is read strictly, like a webhook's: a misspelt "reson"
// must not set a rejection without its reason.
var statusKeys = []string{"status", "reason", "note", "changedAt"}

// StatusShape is the refusal of a status body that is not the object a
// status is written as, empty included.
const StatusShape = `the body must be a JSON object: {"status": "...", "reason": "...", "note": "...", "changedAt": "..."}`

// jsonStatus reads a driver's status body. null stands for an absent
// reason, note or changedAt; each value is text, kept as sent for the
// service's rules to name.
func jsonStatus(dec *jsontext.Decoder, m *restv2.DriverStatusInput) error {
	return jsonObject(dec, StatusShape, statusKeys, "", func(name string) error {
		v, err := statusMember(dec, name, name)
		putStatusMember(name, v, &m.Status, &m.Reason, &m.Note, &m.ChangedAt)
		return err
	})
}

// statusMember reads the member name of a status, or of a batch entry, as
// text; field names it in a refusal. null is nil, as absent (but for
// status, which must be text), and a driverId may be a JSON number.
func statusMember(dec *jsontext.Decoder, name, field string) (*string, error) {
	switch {
	case name != "status" && dec.PeekKind() == 'n':
		_, err := dec.ReadToken()
		return nil, err
	case name == "driverId" && dec.PeekKind() == '0':
		v, err := dec.ReadValue()
		return new(string(v)), err
	}
	v, err := jsonText(dec, field)
	return &v, err
}

// putStatusMember stores v, the member name of a status, in its field.
func putStatusMember(name string, v *string, status *string, reason, note, changedAt **string) {
	switch name {
	case "status":
		*status = rules.OrEmpty(v)
	case "reason":
		*reason = v
	case "note":
		*note = v
	case "changedAt":
		*changedAt = v
	}
}

// The members of a batch body and of its entries.
var (
	statusBatchKeys = []string{"statuses"}
	statusEntryKeys = []string{"driverId", "email", "status", "reason", "note", "changedAt"}
)

// StatusBatchShape is the refusal of a batch body that is not the object a
// batch is written as.
const StatusBatchShape = `the body must be a JSON object: {"statuses": [{"driverId" or "email", "status", "reason", "note", "changedAt"}, ...]}`

// statusBatchItems bounds a batch: the service takes at most 1,000
// entries, and reading further ones would only grow the refusal.
var statusBatchItems = itemLimit{1000, "statuses: the batch lists more than 1000 entries; send the rest in further requests"}

// jsonStatusBatch reads a batch of statuses, each entry strictly. An
// entry's driverId may be a JSON number or a string: it is kept as text
// for the service to check and echo.
func jsonStatusBatch(dec *jsontext.Decoder, m *restv2.SetDriverStatusesRequest) error {
	return jsonObject(dec, StatusBatchShape, statusBatchKeys, "", func(string) error {
		return jsonArray(dec, "statuses: must be an array of entries", statusBatchItems, func(i int) error {
			e := &restv2.DriverStatusBatchEntry{}
			m.Statuses = append(m.Statuses, e)
			prefix := fmt.Sprintf("statuses[%d].", i)
			return jsonObject(dec, prefix[:len(prefix)-1]+`: must be an object: {"driverId" or "email", "status", ...}`,
				statusEntryKeys, prefix, func(name string) error {
					v, err := statusMember(dec, name, prefix+name)
					switch name {
					case "driverId":
						e.DriverId = v
					case "email":
						e.Email = v
					default:
						putStatusMember(name, v, &e.Status, &e.Reason, &e.Note, &e.ChangedAt)
					}
					return err
				})
		})
	})
}
