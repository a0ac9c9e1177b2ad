package natural

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/intake"
)

// fullApplication sets every field of a natural application.
func fullApplication(t *testing.T) *jobboardv2.DriverApplication {
	return &jobboardv2.DriverApplication{FirstName: "Rosa", LastName: "Vega", Address: "1 Main", Address2: proto.String("Apt 2"),
		City: "Laredo", State: "TX", Zip: "78040", Email: "rosa@example.com", Phone: "9565550100",
		DriverType: jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR, Experience: "0.5",
		Sent: timestamppb.New(mustTime(t, "2026-11-02T14:05:09.5Z")),
		Certifications: []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_TANKER_HAZMAT,
			jobboardv2.Certification_CERTIFICATION_UNSPECIFIED, 9},
		FreightExperience: proto.String("fe"), FreightPreferences: proto.String("fp"), LicenseState: proto.String("tx"),
		PreferredAssignments: proto.String("pa"), PreferredRegions: proto.String("pr"), HasTeam: proto.String("Yes"),
		LicenseClass: proto.String("A"), DateOfBirth: proto.String("07/09/1984"), TwicCard: proto.String("No"),
		Accidents: proto.String("0"), MovingViolations: proto.String("1"), LastLicenseSuspension: proto.Int32(2015),
		LastDui: proto.Int32(2010), InterestedLeasePurchase: proto.String("Maybe"), Teams: proto.String("Solo"),
		TrucksOwned: proto.String("2"), IsPremium: true,
		EmploymentHistory: []*jobboardv2.Employment{{Company: "C", State: "TX", Phone: "9565550101",
			StartDate: "2019-03-01", EndDate: proto.String("2020-01-01")}},
		JobApplications: []*jobboardv2.JobApplicationInput{
			{Reference: "R1", IsDirectApp: true, CreatedAt: timestamppb.New(mustTime(t, "2026-11-02T15:00:00Z"))},
			{Reference: "R2"}},
	}
}

func TestApplication(t *testing.T) {
	got := Application(fullApplication(t))
	checks := []struct {
		field     string
		got, want any
	}{
		{"driver_type", got.DriverType, "Owner Operator"},
		{"sent", got.Sent, "2026-11-02T14:05:09.5Z"},
		{"endorsements", got.Endorsements, []string{"X", "CERTIFICATION_UNSPECIFIED", "9"}},
		{"experience", got.Experience, "0.5"},
		{"last_dui", *got.LastDUI, int32(2010)},
		{"employment_history", got.EmploymentHistory, []intake.Employment{{Company: "C", State: "TX", Phone: "9565550101",
			StartDate: "2019-03-01", EndDate: proto.String("2020-01-01")}}},
		{"job_applications", got.JobApplications, []intake.JobApplication{
			{Reference: "R1", IsDirectApp: true, CreatedAt: "2026-11-02T15:00:00Z"}, {Reference: "R2"}}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.field, c.got, c.want)
		}
	}
	// Every field of the lenient form is filled from the natural one.
	v := reflect.ValueOf(got)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("lenient field %s left empty", v.Type().Field(i).Name)
		}
	}
	empty := Application(&jobboardv2.DriverApplication{})
	if empty.DriverType != "" || empty.Sent != "" || len(empty.Endorsements) != 0 || empty.Address2 != nil || empty.JobApplications != nil {
		t.Errorf("an empty application: %#v", empty)
	}
}

// TestApplicationReadsBack: every driver type and certification a caller
// sends, and its sent, come back alike in DriverDetail once the core has
// stored the lenient values (labels, codes shown as labels, the instant to
// the second).
func TestApplicationReadsBack(t *testing.T) {
	for dt := range jobboardv2.DriverType_name {
		for c := range jobboardv2.Certification_name {
			if dt == 0 || c == 0 {
				continue
			}
			in := &jobboardv2.DriverApplication{DriverType: jobboardv2.DriverType(dt),
				Certifications: []jobboardv2.Certification{jobboardv2.Certification(c)},
				Sent:           timestamppb.New(time.Date(2026, 11, 2, 14, 5, 9, 0, time.UTC))}
			lenient := Application(in)
			code, _ := CertificationCodes.Value(lenient.Endorsements[0])
			label, _ := Certifications.Label(code)
			back := DriverDetail(&restv2.DriverDetail{DriverType: lenient.DriverType, Endorsement: label,
				Sent: lenient.Sent})
			if back.DriverType != in.DriverType || !reflect.DeepEqual(back.Certifications, in.Certifications) ||
				!back.Sent.AsTime().Equal(in.Sent.AsTime()) {
				t.Errorf("%v %v read back as %v %v %v", in.DriverType, in.Certifications, back.DriverType, back.Certifications, back.Sent)
			}
		}
	}
}

// TestApplicationFieldsExist: every field of the lenient form a problem may
// name leads to a field of the gRPC application.
func TestApplicationFieldsExist(t *testing.T) {
	fields := (&jobboardv2.DriverApplication{}).ProtoReflect().Descriptor().Fields()
	typ := reflect.TypeFor[intake.Application]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if fields.ByName(protoreflect.Name(ApplicationField(name))) == nil {
			t.Errorf("lenient field %s: no gRPC field %s", name, ApplicationField(name))
		}
	}
	tests := []struct{ lenient, grpc string }{
		{"endorsements", "certifications"},
		{"job_applications[2].created_at", "job_applications[2].created_at"},
		{"employment_history[0].end_date", "employment_history[0].end_date"},
		{"sent", "sent"},
	}
	for _, tt := range tests {
		if got := ApplicationField(tt.lenient); got != tt.grpc {
			t.Errorf("ApplicationField(%q) = %q, want %q", tt.lenient, got, tt.grpc)
		}
	}
}
