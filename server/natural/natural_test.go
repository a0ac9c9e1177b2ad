package natural

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// vocabularyCase checks one vocabulary against its enum: every value but
// UNSPECIFIED has a label, and the label leads back to the value.
type vocabularyCase struct {
	enum   protoreflect.EnumDescriptor
	labels []string
	label  func(n int32) (string, bool)
	value  func(label string) (int32, bool)
}

func vocab[E ~int32](v Vocabulary[E], enum protoreflect.EnumDescriptor) vocabularyCase {
	return vocabularyCase{enum: enum, labels: v.Labels(),
		label: func(n int32) (string, bool) { return v.Label(E(n)) },
		value: func(l string) (int32, bool) { e, ok := v.Value(l); return int32(e), ok }}
}

func TestEveryEnumValueBothWays(t *testing.T) {
	cases := map[string]vocabularyCase{
		"DriverType":      vocab(DriverTypes, jobboardv2.DriverType(0).Descriptor()),
		"Preference":      vocab(Preferences, jobboardv2.Preference(0).Descriptor()),
		"FreightType":     vocab(FreightTypes, jobboardv2.FreightType(0).Descriptor()),
		"PayFrequency":    vocab(PayFrequencies, jobboardv2.PayFrequency(0).Descriptor()),
		"EmploymentType":  vocab(EmploymentTypes, jobboardv2.EmploymentType(0).Descriptor()),
		"RouteType":       vocab(RouteTypes, jobboardv2.RouteType(0).Descriptor()),
		"LicenseClass":    vocab(LicenseClasses, jobboardv2.LicenseClass(0).Descriptor()),
		"Certification":   vocab(Certifications, jobboardv2.Certification(0).Descriptor()),
		"CertCodes":       vocab(CertificationCodes, jobboardv2.Certification(0).Descriptor()),
		"JobImportStatus": vocab(JobImportStatuses, jobboardv2.JobImportStatus(0).Descriptor()),
		"DriverOrder":     vocab(driverOrders, jobboardv2.DriverOrder(0).Descriptor()),
		"EventType":       vocab(EventTypes, jobboardv2.EventType(0).Descriptor()),
		"WebhookAuthType": vocab(WebhookAuthTypes, jobboardv2.WebhookAuthType(0).Descriptor()),
		"DisabledReason":  vocab(WebhookDisabledReasons, jobboardv2.WebhookDisabledReason(0).Descriptor()),
	}
	for name, c := range cases {
		values := c.enum.Values()
		if len(c.labels) != values.Len()-1 {
			t.Errorf("%s: %d labels for %d enum values besides UNSPECIFIED", name, len(c.labels), values.Len()-1)
		}
		for i := range values.Len() {
			v := values.Get(i)
			label, ok := c.label(int32(v.Number()))
			if v.Number() == 0 {
				if ok || !strings.HasSuffix(string(v.Name()), "_UNSPECIFIED") {
					t.Errorf("%s: zero value %s has label %q", name, v.Name(), label)
				}
				continue
			}
			back, ok2 := c.value(label)
			if !ok || !ok2 || back != int32(v.Number()) {
				t.Errorf("%s: %s -> %q -> %d", name, v.Name(), label, back)
			}
			// The enum value's comment quotes the label it stands for
			// (certification codes are the letter in the label's parentheses).
			if name != "CertCodes" && name != "DriverOrder" && name != "JobImportStatus" {
				if comment := enumComment(t, v); !strings.Contains(comment, `"`+label+`"`) {
					t.Errorf("%s: the comment of %s does not name %q: %q", name, v.Name(), label, comment)
				}
			}
		}
		if _, ok := c.value("no such label"); ok {
			t.Errorf("%s: an unknown label has a value", name)
		}
		if _, ok := c.label(int32(values.Len()) + 5); ok {
			t.Errorf("%s: an unknown number has a label", name)
		}
	}
}

func TestCents(t *testing.T) {
	for _, c := range []struct {
		cents   int64
		decimal string
	}{{0, "0.00"}, {5, "0.05"}, {50, "0.50"}, {1850, "18.50"}, {100000000, "1000000.00"}, {-5, "-0.05"}, {-1850, "-18.50"}} {
		if got := domain.Cents(c.cents).Decimal(); got != c.decimal {
			t.Errorf("Decimal(%d) = %q, want %q", c.cents, got, c.decimal)
		}
		if c.cents >= 0 {
			if got := int64(domain.ParseCents(c.decimal)); got != c.cents {
				t.Errorf("Cents(%q) = %d, want %d", c.decimal, got, c.cents)
			}
		}
		if got := centsText(c.decimal); got != itoa(c.cents) {
			t.Errorf("centsText(%q) = %q", c.decimal, got)
		}
	}
	for s, want := range map[string]int64{"18.5": 1850, "0018": 1800, "7": 700} {
		if got := int64(domain.ParseCents(s)); got != want {
			t.Errorf("Cents(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestJobText(t *testing.T) {
	in := &jobboardv2.JobInput{ReferenceNumber: "R1", Title: "T", City: proto.String("Dallas"), State: "tx",
		DriverType: jobboardv2.DriverType_DRIVER_TYPE_STUDENT, FreightType: jobboardv2.FreightType_FREIGHT_TYPE_YARD_SPOTTER,
		PayAmountMinCents: proto.Int64(1805), PayFrequency: jobboardv2.PayFrequency_PAY_FREQUENCY_PER_MILE,
		EmploymentType: []jobboardv2.EmploymentType{jobboardv2.EmploymentType_EMPLOYMENT_TYPE_PART_TIME, 99},
		RouteType:      []jobboardv2.RouteType{jobboardv2.RouteType_ROUTE_TYPE_LTL},
		Description:    "D", TwicOnly: true, Preference: 42}
	want := &restv2.JobInput{ReferenceNumber: proto.String("R1"), Title: proto.String("T"), City: proto.String("Dallas"),
		State: proto.String("tx"), DriverType: proto.String("Student"), FreightType: proto.String("Yard Spotter"),
		PayAmountMin: proto.String("18.05"), PayFrequency: proto.String("Per Mile"),
		EmploymentType: []string{"Part-Time", "99"}, RouteType: []string{"LTL"}, Description: proto.String("D"),
		TwicOnly: proto.String("true"), Preference: proto.String("42")}
	if got := JobText(in); !proto.Equal(got, want) {
		t.Errorf("JobText:\n got %v\nwant %v", got, want)
	}
	if got := JobText(&jobboardv2.JobInput{}); got.DriverType != nil || got.PayAmountMax != nil || got.GetTwicOnly() != "false" {
		t.Errorf("an empty job: %v", got)
	}
}

func TestJob(t *testing.T) {
	in := &domain.Job{ID: 7, PostedOn: "2026-11-02", JobFields: domain.JobFields{ReferenceNumber: "R1", State: "TX",
		DriverType: "Owner Operator", FreightType: "Dry Van", PayMax: new(domain.Cents(68)),
		Preference: new(domain.Preference("Team Solo")), EmploymentType: []domain.EmploymentType{"Full-Time", "Permanent"},
		RouteType: []domain.RouteType{"OTR"}, TwicOnly: true, LicenseClass: new(domain.LicenseClass("None"))}}
	want := &jobboardv2.Job{Id: 7, Date: "2026-11-02", ReferenceNumber: "R1", State: "TX",
		DriverType: jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR, FreightType: jobboardv2.FreightType_FREIGHT_TYPE_DRY_VAN,
		PayAmountMaxCents: proto.Int64(68), Preference: jobboardv2.Preference_PREFERENCE_TEAM_SOLO,
		EmploymentType: []jobboardv2.EmploymentType{jobboardv2.EmploymentType_EMPLOYMENT_TYPE_FULL_TIME, jobboardv2.EmploymentType_EMPLOYMENT_TYPE_PERMANENT},
		RouteType:      []jobboardv2.RouteType{jobboardv2.RouteType_ROUTE_TYPE_OTR}, TwicOnly: true,
		LicenseClass: jobboardv2.LicenseClass_LICENSE_CLASS_NONE}
	if got := Job(in); !proto.Equal(got, want) {
		t.Errorf("Job:\n got %v\nwant %v", got, want)
	}
}

func TestEntriesNameTheGRPCFields(t *testing.T) {
	in := []*restv2.BatchEntry{
		{Index: proto.Int32(0), Field: proto.String("payAmountMin"), Value: proto.String("-0.05"), Message: "m"},
		{Index: proto.Int32(1), Field: proto.String("payAmountMax"), Message: "missing"},
		{Index: proto.Int32(2), ReferenceNumber: proto.String("R"), Field: proto.String("state"), Value: proto.String("XX"), Message: "bad"},
		{Id: proto.Int64(9), Message: "job 9 not found"},
	}
	want := []*jobboardv2.BatchEntry{
		{Index: proto.Int32(0), Field: proto.String("payAmountMinCents"), Value: proto.String("-5"), Message: "m"},
		{Index: proto.Int32(1), Field: proto.String("payAmountMaxCents"), Message: "missing"},
		{Index: proto.Int32(2), ReferenceNumber: proto.String("R"), Field: proto.String("state"), Value: proto.String("XX"), Message: "bad"},
		{Id: proto.Int64(9), Message: "job 9 not found"},
	}
	got := Entries(in)
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("entry %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestListDriversFilter(t *testing.T) {
	after := timestamppb.New(mustTime(t, "2026-11-01T08:00:00Z"))
	cases := []struct {
		name string
		in   *jobboardv2.ListDriversRequest
		want *restv2.ListDriversRequest
	}{
		{"nothing", &jobboardv2.ListDriversRequest{}, &restv2.ListDriversRequest{}},
		{"every filter", &jobboardv2.ListDriversRequest{Certification: jobboardv2.Certification_CERTIFICATION_TANK_VEHICLES,
			DriverType: jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER, Email: "a@b.c", SentAfter: after, SentBefore: after,
			FirstName: "Ann", LastName: "Lee", HasJobApps: proto.Bool(false), JobTitle: "OTR", LivesWithinRadiusMiles: 25,
			LivesWithinZip: "64801", MinExperienceYears: proto.Float64(1.5), Phone: "555", State: "MO",
			Order: jobboardv2.DriverOrder_DRIVER_ORDER_DRIVER_TYPE, Descending: true},
			&restv2.ListDriversRequest{Certifications: "N", DriverType: "Company Driver", Email: "a@b.c",
				StartDate: "2026-11-01T08:00:00Z", EndDate: "2026-11-01T08:00:00Z", FirstName: "Ann", LastName: "Lee",
				HasJobApps: "false", JobTitle: "OTR", LivesWithinRadius: "25", LivesWithinZip: "64801", MinExperience: "1.5",
				Phone: "555", State: "MO", Sort: "-driver_type"}},
		{"descending by id", &jobboardv2.ListDriversRequest{Descending: true}, &restv2.ListDriversRequest{Sort: "-id"}},
		{"by name", &jobboardv2.ListDriversRequest{Order: jobboardv2.DriverOrder_DRIVER_ORDER_NAME}, &restv2.ListDriversRequest{Sort: "name"}},
		{"no experience", &jobboardv2.ListDriversRequest{MinExperienceYears: proto.Float64(0)}, &restv2.ListDriversRequest{MinExperience: "0"}},
		{"statuses", &jobboardv2.ListDriversRequest{Statuses: []jobboardv2.LeadStatus{jobboardv2.LeadStatus_LEAD_STATUS_HIRED,
			jobboardv2.LeadStatus_LEAD_STATUS_NEW}}, &restv2.ListDriversRequest{Status: "hired,new"}},
		{"statuses unspecified and unknown", &jobboardv2.ListDriversRequest{Statuses: []jobboardv2.LeadStatus{
			jobboardv2.LeadStatus_LEAD_STATUS_UNSPECIFIED, 42}}, &restv2.ListDriversRequest{Status: "LEAD_STATUS_UNSPECIFIED,42"}},
	}
	for _, c := range cases {
		if got := ListDriversFilter(c.in); !proto.Equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

func TestDriverDetail(t *testing.T) {
	in := &restv2.DriverDetail{Id: 3, DriverType: "Student", Sent: "2026-11-01T08:00:00Z",
		Endorsement:     "Doubles/Triples (T), Tanker + HAZMAT (X)",
		JobApplications: []*restv2.JobApplication{{JobId: 4, CreatedAt: "2026-11-01T09:00:00Z"}}}
	got := DriverDetail(in)
	want := []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_DOUBLES_TRIPLES, jobboardv2.Certification_CERTIFICATION_TANKER_HAZMAT}
	if len(got.Certifications) != 2 || got.Certifications[0] != want[0] || got.Certifications[1] != want[1] {
		t.Errorf("certifications %v, want %v", got.Certifications, want)
	}
	if got.DriverType != jobboardv2.DriverType_DRIVER_TYPE_STUDENT || got.Sent.AsTime() != mustTime(t, "2026-11-01T08:00:00Z") ||
		got.JobApplications[0].CreatedAt.AsTime() != mustTime(t, "2026-11-01T09:00:00Z") {
		t.Errorf("detail %v", got)
	}
	if got := DriverDetail(&restv2.DriverDetail{}); got.Certifications != nil || got.Sent != nil {
		t.Errorf("an empty detail: %v", got)
	}
}

func TestJobImport(t *testing.T) {
	in := &restv2.JobImport{Id: "u", RequestedAt: "2026-11-02T10:00:00.123456Z", Status: "complete",
		CompletedAt: proto.String("2026-11-02T10:00:01.000001Z"),
		Results: &restv2.JobImportResults{Added: 1, Processed: 2, Failed: 1,
			Errors:        []*restv2.JobImportError{{Index: 1, Messages: []string{"m"}}},
			IgnoredValues: []*restv2.BatchEntry{{Index: proto.Int32(0), Field: proto.String("payAmountMax"), Value: proto.String("1.00"), Message: "x"}}}}
	got := JobImport(in)
	if got.Status != jobboardv2.JobImportStatus_JOB_IMPORT_STATUS_COMPLETE || got.RequestedAt.AsTime().Nanosecond() != 123456000 ||
		got.CompletedAt.AsTime().Nanosecond() != 1000 || got.Results.Errors[0].Messages[0] != "m" ||
		got.Results.IgnoredValues[0].GetField() != "payAmountMaxCents" || got.Results.IgnoredValues[0].GetValue() != "100" {
		t.Errorf("import %v", got)
	}
	if got := JobImport(&restv2.JobImport{Status: "pending", RequestedAt: "2026-11-02T10:00:00.000000Z"}); got.CompletedAt != nil || got.Results != nil ||
		got.Status != jobboardv2.JobImportStatus_JOB_IMPORT_STATUS_PENDING {
		t.Errorf("a pending import: %v", got)
	}
}

// TestFilterFieldsExist: every parameter an error may name leads to a field
// of the gRPC request.
func TestFilterFieldsExist(t *testing.T) {
	grpcFields := (&jobboardv2.ListDriversRequest{}).ProtoReflect().Descriptor().Fields()
	restFields := (&restv2.ListDriversRequest{}).ProtoReflect().Descriptor().Fields()
	for i := range restFields.Len() {
		param := string(restFields.Get(i).Name())
		if param == "max" || param == "page" { // paging: the gRPC list pages by token
			continue
		}
		if param == "include" { // gRPC answers carry every member
			continue
		}
		if grpcFields.ByName(protoreflect.Name(FilterField(param))) == nil {
			t.Errorf("parameter %s: no gRPC field %s", param, FilterField(param))
		}
	}
}

// TestJobWordFieldsMatchTheirEnums: each closed job field's enum, in
// JobInput and in Job, has one value a word, in the words' order (its
// comment quotes the word), so the tables map them by number.
func TestJobWordFieldsMatchTheirEnums(t *testing.T) {
	for _, f := range JobFieldTable {
		if f.Kind != domain.WordField && f.Kind != domain.WordsField {
			continue
		}
		for _, m := range []protoreflect.MessageDescriptor{(&jobboardv2.JobInput{}).ProtoReflect().Descriptor(),
			(&jobboardv2.Job{}).ProtoReflect().Descriptor()} {
			fd := m.Fields().ByJSONName(f.Name)
			if fd == nil || fd.Enum() == nil {
				t.Errorf("%s.%s: no enum field", m.Name(), f.Name)
				continue
			}
			values := fd.Enum().Values()
			if values.Len() != len(f.Words)+1 {
				t.Errorf("%s.%s: %d enum values for %d words", m.Name(), f.Name, values.Len(), len(f.Words))
				continue
			}
			for i, w := range f.Words {
				v := values.ByNumber(protoreflect.EnumNumber(i + 1))
				if v == nil || !strings.Contains(enumComment(t, v), `"`+w+`"`) {
					t.Errorf("%s.%s: value %d does not stand for %q", m.Name(), f.Name, i+1, w)
				}
				if e := EnumOf(f.JobField, w); e != int32(i+1) {
					t.Errorf("%s: EnumOf(%q) = %d", f.Name, w, e)
				}
			}
		}
	}
}
