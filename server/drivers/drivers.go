package drivers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/parallel"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/internal/usstate"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/pagetoken"
	"github.com/truckjobs/jobboard/server/store"
)

// Paging of the drivers list.
const (
	DefaultPage    = 100
	MaxPage        = 1000
	maxRadiusMiles = 500
)

// Service implements jobboard.v2.Service.
type Service struct {
	restv2.UnimplementedDriverServiceServer
	store *store.Store
	// tokens signs the page tokens of the gRPC list (NewServices sets it).
	tokens pagetoken.Signer
	// events writes the status changes' events (NewServices sets it).
	events Events
}

// New returns the driver service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// UseTokens signs and reads the gRPC list's page tokens with t;
// NewServices gives every list the database's key.
func (s *Service) UseTokens(t pagetoken.Signer) { s.tokens = t }

// Tokens is the signer of the gRPC list's page tokens.
func (s *Service) Tokens() pagetoken.Signer { return s.tokens }

// List reads a page of the account's drivers as f says (filters, order,
// the cursor to start after and the rows to read), and how many match.
func (s *Service) List(ctx context.Context, accountID int64, f store.DriverFilter) ([]store.DriverListItem, int64, error) {
	return s.store.ListDrivers(ctx, accountID, f)
}

// ListDrivers returns one page of the account's applicants.
func (s *Service) ListDrivers(ctx context.Context, req *restv2.ListDriversRequest) (*restv2.ListDriversResponse, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	f, err := s.DriverFilter(ctx, req)
	if err != nil {
		return nil, err
	}
	include, err := ReadInclude(req.GetInclude())
	if err != nil {
		return nil, err
	}
	items, total, err := s.store.ListDrivers(ctx, caller.AccountID, f)
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	out := &restv2.ListDriversResponse{
		Drivers:     make([]*restv2.DriverSummary, len(items)),
		TotalCount:  total,
		Page:        int32(f.Offset/f.Limit + 1),
		Max:         int32(f.Limit),
		HasNextPage: int64(f.Offset+len(items)) < total,
	}
	for i := range items {
		out.Drivers[i] = Summary(&items[i], include)
	}
	return out, nil
}

// GetDriver returns one applicant of the account.
func (s *Service) GetDriver(ctx context.Context, req *restv2.GetDriverRequest) (*restv2.GetDriverResponse, error) {
	include, err := ReadInclude(req.GetInclude())
	if err != nil {
		return nil, err
	}
	d, err := call.AccountRecord(ctx, func() string { return fmt.Sprintf("driver %d", req.GetId()) }, func(accountID int64) (store.DriverDetail, error) {
		return s.store.Driver(ctx, accountID, req.GetId())
	})
	if err != nil {
		return nil, err
	}
	return &restv2.GetDriverResponse{Driver: Detail(&d, include)}, nil
}

// Include is what a REST answer adds to the v2.0 shape of a driver when
// asked (include=): without it the shape is the v2.0 one, member for member.
type Include struct {
	// Status adds the account's lead status of the driver.
	Status bool
}

// ReadInclude reads the include parameter: names of members separated by
// commas, any case; "" asks for none.
func ReadInclude(text string) (Include, error) {
	var inc Include
	if strings.TrimSpace(text) == "" {
		return inc, nil
	}
	for _, name := range strings.Split(text, ",") {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "status":
			inc.Status = true
		default:
			return inc, badParam("include", text, call.Quoted(strings.TrimSpace(name))+" is not a member to include; allowed: status")
		}
	}
	return inc, nil
}

// badParam is the INVALID_ARGUMENT for a query parameter.
func badParam(name, value, allowed string) error {
	return call.InvalidField(name, value, "is not valid; "+allowed)
}

// DriverFilter checks the query parameters of docs/api.md, Drivers, and turns
// them into the store's filter, as ListDrivers does; errors are gRPC
// statuses. It is exported so the store's statements for a request can be
// examined without listing.
func (s *Service) DriverFilter(ctx context.Context, req *restv2.ListDriversRequest) (store.DriverFilter, error) {
	f := store.DriverFilter{Sort: "id", Limit: DefaultPage}
	// The REST gateway refuses such values first; gRPC callers reach here.
	if err := call.CheckText(req); err != nil {
		return f, err
	}
	// A fixed order, so that a request with several bad parameters always
	// reports the same one; paging comes last as page counts in pages of max.
	steps := []func(*restv2.ListDriversRequest, *store.DriverFilter) error{
		filterCertification,
		filterDriverType,
		filterIdentity,
		filterSentRange,
		filterJobApps,
		func(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
			return s.filterRadius(ctx, req, f)
		},
		filterMinExperience,
		filterState,
		filterStatus,
		filterSort,
		filterPaging,
	}
	for _, step := range steps {
		if err := step(req, &f); err != nil {
			return f, err
		}
	}
	return f, nil
}

func filterCertification(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetCertifications()); v != "" {
		code, ok := certificationCode(v)
		if !ok {
			return badParam("certifications", v, "allowed: T, H, N, X or their labels such as \"HAZMAT (H)\"")
		}
		f.Certification = code
	}
	return nil
}

func filterDriverType(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetDriverType()); v != "" {
		canon, ok := rules.Canonical(driverTypeLabels, v)
		if !ok {
			return badParam("driver_type", v, "allowed: "+strings.Join(driverTypeLabels, ", "))
		}
		f.DriverType = canon
	}
	return nil
}

// filterIdentity reads the names, e-mail and phone. An e-mail or phone
// that no application could hold matches nothing rather than failing.
func filterIdentity(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetEmail()); v != "" {
		f.EmailKey = store.FoldCase(v)
		f.MatchNothing = f.MatchNothing || !validEmail(v)
	}
	if v := strings.TrimSpace(req.GetPhone()); v != "" {
		digits, ok := phoneDigits(v)
		f.PhoneDigits = digits
		f.MatchNothing = f.MatchNothing || !ok
	}
	f.FirstNameKey = store.FoldCase(strings.TrimSpace(req.GetFirstName()))
	f.LastNameKey = store.FoldCase(strings.TrimSpace(req.GetLastName()))
	return nil
}

// filterSentRange reads start_date and end_date; an end_date without a
// time includes the whole of that day.
func filterSentRange(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	const allowed = "allowed: YYYY-MM-DD, YYYY-MM-DDThh:mm:ss or RFC 3339"
	if v := strings.TrimSpace(req.GetStartDate()); v != "" {
		t, _, err := parseDateTime(v)
		if err != nil {
			return badParam("start_date", v, allowed)
		}
		f.SentFrom = &t
	}
	if v := strings.TrimSpace(req.GetEndDate()); v != "" {
		t, dateOnly, err := parseDateTime(v)
		if err != nil {
			return badParam("end_date", v, allowed)
		}
		if dateOnly {
			t = t.AddDate(0, 0, 1)
		}
		f.SentBefore = &t
	}
	return nil
}

// filterJobApps reads has_job_apps and job_title.
func filterJobApps(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetHasJobApps()); v != "" {
		has, ok := rules.Bool(v)
		if !ok {
			return badParam("has_job_apps", v, "allowed: 1, 0, true, false")
		}
		f.HasJobApps = &has
	}
	// Titles are compared with PostgreSQL's lower() on both sides, which
	// folds only ASCII in a C-locale database.
	f.JobTitle = strings.TrimSpace(req.GetJobTitle())
	return nil
}

// filterRadius reads lives_within_radius and lives_within_zip, which only
// make sense together, and looks the ZIP's centre up.
func (s *Service) filterRadius(ctx context.Context, req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	radius, zip := strings.TrimSpace(req.GetLivesWithinRadius()), strings.TrimSpace(req.GetLivesWithinZip())
	switch {
	case radius == "" && zip == "":
		return nil
	case zip == "":
		return call.InvalidFieldText("lives_within_radius", "needs lives_within_zip, the centre of the radius")
	case radius == "":
		return call.InvalidFieldText("lives_within_zip", "needs lives_within_radius, the radius in miles")
	}
	miles, err := strconv.Atoi(radius)
	if err != nil || miles < 1 || miles > maxRadiusMiles {
		return badParam("lives_within_radius", radius, fmt.Sprintf("allowed: a whole number of miles from 1 to %d", maxRadiusMiles))
	}
	if len(zip) != 5 || strings.Trim(zip, "0123456789") != "" {
		return badParam("lives_within_zip", zip, "allowed: a five-digit ZIP code")
	}
	lat, lon, err := s.store.ZipCentroid(ctx, zip)
	if errors.Is(err, store.ErrNotFound) {
		return badParam("lives_within_zip", zip, "it is not a known US ZIP code")
	}
	if err != nil {
		return call.Internal(ctx, err)
	}
	f.Radius = &store.Radius{Latitude: lat, Longitude: lon, Miles: float64(miles)}
	return nil
}

func filterMinExperience(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetMinExperience()); v != "" {
		years, err := strconv.ParseFloat(v, 64)
		if err != nil || !allowedExperience(years) {
			return badParam("min_experience", v, "allowed: 0, 0.5, 1, 1.5, 2, or a whole number from 3 to 99")
		}
		f.MinExperience = &years
	}
	return nil
}

func filterState(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetState()); v != "" {
		if !usstate.IsCode(strings.ToUpper(v)) {
			return badParam("state", v, "allowed: the two-letter code of a US state or DC")
		}
		f.State = strings.ToUpper(v)
	}
	return nil
}

// filterStatus reads the lead statuses (domain.ReadStatusFilter).
func filterStatus(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := req.GetStatus(); strings.TrimSpace(v) != "" {
		statuses, problem := domain.ReadStatusFilter(v)
		if problem != nil {
			return call.InvalidField(problem.Field, problem.Value, problem.Rule)
		}
		f.Statuses = domain.Names(statuses)
	}
	return nil
}

func filterSort(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetSort()); v != "" {
		key, desc := strings.CutPrefix(v, "-")
		switch key {
		case "id", "name", "state", "driver_type", "sent":
			f.Sort, f.Descending = key, desc
		default:
			return badParam("sort", v, "allowed: id, name, state, driver_type, sent, each optionally preceded by - for descending")
		}
	}
	return nil
}

// filterPaging reads max, then page, whose offset counts in pages of max.
func filterPaging(req *restv2.ListDriversRequest, f *store.DriverFilter) error {
	if v := strings.TrimSpace(req.GetMax()); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPage {
			return badParam("max", v, fmt.Sprintf("allowed: a whole number from 1 to %d", MaxPage))
		}
		f.Limit = n
	}
	if v := strings.TrimSpace(req.GetPage()); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > math.MaxInt32/MaxPage {
			return badParam("page", v, "allowed: a whole number from 1")
		}
		f.Offset = (n - 1) * f.Limit
	}
	return nil
}

// allowedExperience: 0, 0.5, 1, 1.5, 2, then every whole number 3-99.
func allowedExperience(y float64) bool {
	switch y {
	case 0, 0.5, 1, 1.5, 2:
		return true
	}
	return y >= 3 && y <= 99 && y == math.Trunc(y)
}

// sentFormat is RFC 3339 in UTC with a numeric offset, seconds precision.
const sentFormat = "2006-01-02T15:04:05+00:00"

// Summary is a listed driver as the REST list shows it, with the members
// include asks for.
func Summary(d *store.DriverListItem, include Include) *restv2.DriverSummary {
	out := &restv2.DriverSummary{
		Id: d.ID, FirstName: d.FirstName, LastName: d.LastName, Address: d.Address, Address2: d.Address2,
		City: d.City, State: d.State, Zip: d.Zip, Email: d.Email, Phone: d.Phone, DriverType: d.DriverType,
		Experience: d.Experience, Sent: d.Sent.UTC().Format(sentFormat), HasJobApps: d.HasJobApps,
	}
	if include.Status {
		out.Status = &d.Status
	}
	return out
}

// Detail is a driver as REST shows it alone, with the members include
// asks for.
func Detail(d *store.DriverDetail, include Include) *restv2.DriverDetail {
	p := &d.DriverProfile
	b := p.DriverBasics
	out := &restv2.DriverDetail{
		Id: d.ID, FirstName: b.FirstName, LastName: b.LastName, Address: b.Address, Address2: b.Address2,
		City: b.City, State: b.State, Zip: b.Zip, Email: b.Email, Phone: b.Phone, DriverType: b.DriverType,
		Experience: b.Experience, Sent: d.Sent.UTC().Format(sentFormat), HasJobApps: d.HasJobApps,
		Endorsement:             endorsementText(p.Endorsements),
		FreightExperience:       p.FreightExperience,
		FreightPreferences:      p.FreightPreferences,
		LicenseState:            p.LicenseState,
		PreferredAssignments:    p.PreferredAssignments,
		PreferredRegions:        p.PreferredRegions,
		HasTeam:                 p.HasTeam,
		LicenseClass:            p.LicenseClass,
		TwicCard:                p.TwicCard,
		Accidents:               p.Accidents,
		MovingViolations:        p.MovingViolations,
		LastLicenseSuspension:   p.LastLicenseSuspension,
		LastDui:                 p.LastDUI,
		InterestedLeasePurchase: p.InterestedLeasePurchase,
		Teams:                   p.Teams,
		TrucksOwned:             p.TrucksOwned,
		IsPremium:               p.IsPremium,
		EmploymentHistory:       make([]*restv2.Employment, len(d.Employment)),
		JobApplications:         make([]*restv2.JobApplication, len(d.JobApps)),
	}
	if p.DateOfBirth != nil {
		if t, err := time.Parse(time.DateOnly, *p.DateOfBirth); err == nil {
			out.DateOfBirth = new(t.Format("01/02/2006"))
		}
	}
	for i, e := range d.Employment {
		out.EmploymentHistory[i] = &restv2.Employment{Company: e.Company, State: e.State, Phone: e.Phone, StartDate: e.StartDate, EndDate: e.EndDate}
	}
	for i, j := range d.JobApps {
		out.JobApplications[i] = &restv2.JobApplication{JobId: j.JobID, Title: j.Title, Reference: j.Reference,
			IsDirectApp: j.IsDirectApp, CreatedAt: j.CreatedAt.UTC().Format(sentFormat)}
	}
	if include.Status {
		out.Status = &d.Status
	}
	return out
}

// IntakeService implements jobboard.v2.IntakeService.
type IntakeService struct {
	jobboardv2.UnimplementedDriverIntakeServiceServer
	store *store.Store
	// outbox writes each stored application's event.
	outbox Events
}

// Events writes, in the transaction that stored them, the events of the
// applications received (the outbox's driver.application.received) and of
// the changes of drivers' statuses (driver.status.changed).
type Events interface {
	ApplicationsReceived(ctx context.Context, tx *store.Tx, apps []store.Application, ids []int64) error
	StatusesChanged(ctx context.Context, tx *store.Tx, accountID int64, changes []store.StatusChanged) error
}

// NewIntake returns the intake over st, writing events to ob.
func NewIntake(st *store.Store, ob Events) *IntakeService {
	return &IntakeService{store: st, outbox: ob}
}

// SubmitApplication validates and records one application.
func (s *IntakeService) SubmitApplication(ctx context.Context, req *jobboardv2.SubmitApplicationRequest) (*jobboardv2.SubmitApplicationResponse, error) {
	accountID, err := intakeAccount(ctx, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	apps := []*intake.Application{applicationOf(req.GetApplication())}
	ids, err := importApplications(ctx, s.store, s.outbox, accountID, apps, singleEntry, natural.ApplicationField)
	if err != nil {
		return nil, err
	}
	return &jobboardv2.SubmitApplicationResponse{DriverId: ids[0]}, nil
}

// MaxBatchApplications is the most applications SubmitApplications takes in
// one call: a batch is one transaction, and a thousand keep it to a few
// seconds and a request well within its size limit.
const MaxBatchApplications = 1000

// SubmitApplications validates a batch of applications and records them
// all or none, as the CLI import does.
func (s *IntakeService) SubmitApplications(ctx context.Context, req *jobboardv2.SubmitApplicationsRequest) (*jobboardv2.SubmitApplicationsResponse, error) {
	accountID, err := intakeAccount(ctx, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	switch n := len(req.GetApplications()); {
	case n == 0:
		return nil, call.InvalidFieldText("applications", fmt.Sprintf("is required: 1 to %d applications", MaxBatchApplications))
	case n > MaxBatchApplications:
		return nil, call.InvalidFieldText("applications",
			fmt.Sprintf("holds %d applications; one call takes at most %d, so send them in several calls", n, MaxBatchApplications))
	}
	apps := make([]*intake.Application, len(req.GetApplications()))
	for i, in := range req.GetApplications() {
		apps[i] = applicationOf(in)
	}
	ids, err := importApplications(ctx, s.store, s.outbox, accountID, apps, batchEntries, natural.ApplicationField)
	if err != nil {
		return nil, err
	}
	return &jobboardv2.SubmitApplicationsResponse{DriverIds: ids}, nil
}

// applicationOf is a natural application in the lenient form the core
// checks; nil stays nil, a missing application.
func applicationOf(in *jobboardv2.DriverApplication) *intake.Application {
	if in == nil {
		return nil
	}
	app := natural.Application(in)
	return &app
}

// intakeAccount is the account an intake call records applications to: the
// request's account_id or x-account-id; when both are given they must agree.
func intakeAccount(ctx context.Context, requested int64) (int64, error) {
	caller, err := call.From(ctx)
	if err != nil && !isInternal(ctx) {
		return 0, err
	}
	switch {
	case requested == 0:
		return caller.AccountID, nil
	case caller.AccountID != 0 && caller.AccountID != requested:
		return 0, call.InvalidFieldText("account_id", fmt.Sprintf("%d differs from x-account-id %d", requested, caller.AccountID))
	}
	return requested, nil
}

func isInternal(ctx context.Context) bool {
	c, ok := call.CallerIn(ctx)
	return ok && c.Internal
}

// entries says how the problems of the applications of a request are
// named: in the message, and as the path of the field a gRPC caller finds
// in the google.rpc.BadRequest.
type entries int

const (
	// singleEntry is SubmitApplication's one application: "email" in the
	// message, application.email as the path.
	singleEntry entries = iota
	// fileEntries are the entries of an import file: "[3] email" in the
	// message, applications[3].email as the path.
	fileEntries
	// batchEntries are SubmitApplications': applications[3].email in both.
	batchEntries
)

// path is where a gRPC caller finds application i.
func (e entries) path(i int) string {
	if e == singleEntry {
		return "application"
	}
	return fmt.Sprintf("applications[%d]", i)
}

// place names a problem of application i, whose field is relative to the
// application; a problem without a field is of the application itself.
func (e entries) place(p call.FieldViolation, i int) call.FieldViolation {
	if p.Field == "" {
		p.Field = e.path(i)
	} else {
		p.Field = e.path(i) + "." + p.Field
	}
	switch {
	case e == fileEntries && p.Label == "":
		p.Label = fmt.Sprintf("[%d]", i)
	case e == fileEntries:
		p.Label = fmt.Sprintf("[%d] %s", i, p.Label)
	case e == batchEntries:
		p.Label = p.Field
	case p.Label == "":
		p.Label = p.Field
	}
	return p
}

// ImportApplications validates applications to one account and stores them
// all or none. Problems are INVALID_ARGUMENT naming each entry's index when
// there is more than one entry. ob writes each application's event.
func ImportApplications(ctx context.Context, st *store.Store, ob Events, accountID int64, apps []*intake.Application) ([]int64, error) {
	naming := singleEntry
	if len(apps) > 1 {
		naming = fileEntries
	}
	return importApplications(ctx, st, ob, accountID, apps, naming, sameName)
}

// ImportApplicationFile is ImportApplications for the entries of a file:
// its problems always name the entry's index, even of a file of one.
func ImportApplicationFile(ctx context.Context, st *store.Store, ob Events, accountID int64, apps []*intake.Application) ([]int64, error) {
	return importApplications(ctx, st, ob, accountID, apps, fileEntries, sameName)
}

// sameName names a field of an application as the lenient form does.
func sameName(field string) string { return field }

// importApplications checks every application, then stores them in one
// transaction with their events (ob); naming says how problems name their application, rename how
// they name its fields (the gRPC intake's names differ from the lenient ones).
func importApplications(ctx context.Context, st *store.Store, ob Events, accountID int64, apps []*intake.Application,
	naming entries, rename func(string) string) ([]int64, error) {
	if accountID <= 0 {
		return nil, call.InvalidFieldText("account_id", "is required")
	}
	if _, err := st.Account(ctx, accountID); errors.Is(err, store.ErrNotFound) {
		return nil, status.Errorf(codes.NotFound, "account_id: account %d not found", accountID)
	} else if err != nil {
		return nil, call.Internal(ctx, err)
	}
	valid, problems := checkApplications(accountID, apps, time.Now(), naming, rename)
	if len(problems) > 0 {
		return nil, call.InvalidArgument(problems...)
	}
	// The applications and their events commit together or not at all. A
	// batch rolled back by a deadlock is saved again from the start.
	var ids []int64
	err := st.InRetriedTx(ctx, "save applications", func(tx *store.Tx) error {
		saved, err := tx.SaveApplications(ctx, valid)
		if err != nil {
			return err
		}
		ids = saved.IDs
		// A driver who withdrew and applies again is a new lead: its
		// status changes after the application's event.
		resets, err := tx.ResetWithdrawn(ctx, accountID, saved.ReceivedIDs)
		if err != nil {
			return err
		}
		if err := ob.ApplicationsReceived(ctx, tx, saved.Received, saved.ReceivedIDs); err != nil {
			return err
		}
		return ob.StatusesChanged(ctx, tx, accountID, resets)
	})
	var unknown *store.UnknownJobError
	if errors.As(err, &unknown) {
		field := fmt.Sprintf("job_applications[%d].reference", unknown.JobIndex)
		return nil, call.InvalidArgument(naming.place(call.FieldViolation{Field: field, Label: field,
			Description: fmt.Sprintf("%q is not the reference number of one of the account's jobs", call.Truncate(unknown.Reference, call.MaxEchoed))},
			unknown.Index))
	}
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	return ids, nil
}

// checkApplications checks each application, received at now, and
// converts it for the store; naming and rename say how problems name their
// application and its fields.
func checkApplications(accountID int64, apps []*intake.Application, now time.Time,
	naming entries, rename func(string) string) ([]store.Application, []call.FieldViolation) {
	valid := make([]store.Application, len(apps))
	found := make([][]call.FieldViolation, len(apps))
	// Each application's checks are its own: an import of 100,000 takes
	// every core.
	parallel.For(len(apps), func(i int) {
		if apps[i] != nil {
			valid[i], found[i] = checkApplication(accountID, apps[i], now)
		}
	})
	var problems []call.FieldViolation
	for i, ps := range found {
		if apps[i] == nil {
			problems = append(problems, naming.place(call.FieldViolation{Description: "is required"}, i))
		}
		for _, p := range ps {
			p.Field, p.Label = rename(p.Field), rename(p.Label)
			problems = append(problems, naming.place(p, i))
		}
	}
	return valid, problems
}
