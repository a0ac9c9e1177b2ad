package decode

import (
	"github.com/go-json-experiment/json/jsontext"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
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
		if name != "status" && dec.PeekKind() == 'n' {
			_, err := dec.ReadToken()
			return err
		}
		v, err := jsonText(dec, name)
		switch name {
		case "status":
			m.Status = v
		case "reason":
			m.Reason = &v
		case "note":
			m.Note = &v
		case "changedAt":
			m.ChangedAt = &v
		}
		return err
	})
}
