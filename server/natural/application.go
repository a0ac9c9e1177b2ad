package natural

import (
	"strings"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/intake"
)

// Application is a natural application in the lenient form the validation
// checks. An UNSPECIFIED certification becomes its enum name and a number
// outside an enum its number, so that the error echoes what the caller sent.
func Application(in *jobboardv2.DriverApplication) intake.Application {
	out := intake.Application{
		FirstName: in.GetFirstName(), LastName: in.GetLastName(), Address: in.GetAddress(),
		Address2: in.Address2, City: in.GetCity(), State: in.GetState(), Zip: in.GetZip(),
		Email: in.GetEmail(), Phone: in.GetPhone(), Experience: in.GetExperience(),
		Endorsements:      certificationCodes(in.GetCertifications()),
		FreightExperience: in.FreightExperience, FreightPreferences: in.FreightPreferences,
		LicenseState: in.LicenseState, PreferredAssignments: in.PreferredAssignments,
		PreferredRegions: in.PreferredRegions, HasTeam: in.HasTeam, LicenseClass: in.LicenseClass,
		DateOfBirth: in.DateOfBirth, TwicCard: in.TwicCard, Accidents: in.Accidents,
		MovingViolations: in.MovingViolations, LastLicenseSuspension: in.LastLicenseSuspension,
		LastDUI: in.LastDui, InterestedLeasePurchase: in.InterestedLeasePurchase, Teams: in.Teams,
		TrucksOwned: in.TrucksOwned, IsPremium: in.GetIsPremium(),
	}
	if d := optionalLabel(DriverTypes, in.GetDriverType()); d != nil {
		out.DriverType = *d
	}
	if in.Sent != nil {
		out.Sent = rfc3339(in.GetSent())
	}
	for _, e := range in.GetEmploymentHistory() {
		out.EmploymentHistory = append(out.EmploymentHistory, intake.Employment{Company: e.GetCompany(),
			State: e.GetState(), Phone: e.GetPhone(), StartDate: e.GetStartDate(), EndDate: e.EndDate})
	}
	for _, a := range in.GetJobApplications() {
		ja := intake.JobApplication{Reference: a.GetReference(), IsDirectApp: a.GetIsDirectApp()}
		if a.CreatedAt != nil {
			ja.CreatedAt = rfc3339(a.GetCreatedAt())
		}
		out.JobApplications = append(out.JobApplications, ja)
	}
	return out
}

// certificationCodes are the codes (T, H, N, X) of the certifications.
func certificationCodes(cs []jobboardv2.Certification) []string {
	out := labels(CertificationCodes, cs)
	for i, c := range cs {
		if c == jobboardv2.Certification_CERTIFICATION_UNSPECIFIED {
			out[i] = c.String()
		}
	}
	return out
}

// applicationFields are the fields of the lenient application whose gRPC
// field has another name.
var applicationFields = map[string]string{"endorsements": "certifications"}

// ApplicationField is the gRPC field of a field of the lenient application
// as the validation names it, such as "endorsements" or
// "job_applications[0].created_at" (named alike).
func ApplicationField(field string) string {
	head, rest, _ := strings.Cut(field, ".")
	if f, ok := applicationFields[head]; ok {
		head = f
	}
	if rest == "" {
		return head
	}
	return head + "." + rest
}
