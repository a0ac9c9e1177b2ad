package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/gateway/decode"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// BenchmarkDecodeJobsJSON reads a jobs.json body of 1,000 jobs as
// encoding/json writes it (HTML escaped as \u003c), the shape bench
// scenario 1 posts.
func BenchmarkDecodeJobsJSON(b *testing.B) {
	jobs := make([]map[string]any, 1000)
	for i := range jobs {
		jobs[i] = map[string]any{"referenceNumber": fmt.Sprintf("S%06d", i), "title": "Dry Van Driver",
			"city": "Springfield", "state": "TX", "postalCode": fmt.Sprintf("%05d", 10000+i),
			"driverType": "Company Driver", "freightType": "Dry Van", "payAmountMin": "0.55", "payAmountMax": "0.68",
			"payFrequency": "Per Mile", "employmentType": []string{"Full-Time"}, "routeType": []string{"Regional"},
			"description": fmt.Sprintf("<p>Route S%06d: home <b>every weekend</b>. Late-model trucks with APUs, paid orientation, "+
				"weekly direct deposit, health, dental and vision from day one.</p><ul><li>No touch freight</li><li>Pet policy</li></ul>", i),
			"requirements": "<ul><li>Class A CDL</li><li>1 year of experience</li></ul>", "twicOnly": i%7 == 0, "licenseClass": "A"}
	}
	body, err := json.Marshal(jobs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var m restv2.PostJobsRequest
		if err := decode.JSON(body, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeJobsXML reads a jobs.xml body of the same 1,000 jobs,
// each list value its own element, as XML clients send them.
func BenchmarkDecodeJobsXML(b *testing.B) {
	var body strings.Builder
	body.WriteString(`<?xml version="1.0" encoding="UTF-8"?><jobs>`)
	for i := range 1000 {
		fmt.Fprintf(&body, `<job><referenceNumber>S%06d</referenceNumber><title>Dry Van Driver</title><city>Springfield</city>`+
			`<state>TX</state><postalCode>%05d</postalCode><driverType>Company Driver</driverType><freightType>Dry Van</freightType>`+
			`<payAmountMin>0.55</payAmountMin><payAmountMax>0.68</payAmountMax><payFrequency>Per Mile</payFrequency>`+
			`<employmentType>Full-Time</employmentType><routeType>Regional</routeType>`+
			`<description><![CDATA[<p>Route S%06d: home <b>every weekend</b>. Late-model trucks with APUs, paid orientation, `+
			`weekly direct deposit, health, dental and vision from day one.</p><ul><li>No touch freight</li><li>Pet policy</li></ul>]]></description>`+
			`<requirements><![CDATA[<ul><li>Class A CDL</li><li>1 year of experience</li></ul>]]></requirements>`+
			`<twicOnly>%d</twicOnly><licenseClass>A</licenseClass></job>`, i, 10000+i, i, map[bool]int{true: 1}[i%7 == 0])
	}
	body.WriteString(`</jobs>`)
	data := []byte(body.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var m restv2.PostJobsRequest
		if err := decode.XML(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}
