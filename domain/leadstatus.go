package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// LeadStatus is what became of a driver who applied to an account, as the
// account's employer tells the board (docs/api.md, Lead status). The
// values are the words the API shows and the store keeps.
type LeadStatus string

// The lead statuses, in the order of the gRPC LeadStatus enum.
const (
	// LeadNew is set by the account's first application from the driver,
	// and again by a new application once the driver has withdrawn.
	LeadNew          LeadStatus = "new"
	LeadReviewing    LeadStatus = "reviewing"
	LeadContacted    LeadStatus = "contacted"
	LeadInterviewing LeadStatus = "interviewing"
	LeadOffered      LeadStatus = "offered"
	LeadHired        LeadStatus = "hired"
	// LeadRejected is the only status that may carry a RejectionReason.
	LeadRejected LeadStatus = "rejected"
	// LeadWithdrawn is the driver's own step back; a new application from
	// the driver turns it into LeadNew.
	LeadWithdrawn LeadStatus = "withdrawn"
)

var leadStatuses = []LeadStatus{LeadNew, LeadReviewing, LeadContacted, LeadInterviewing, LeadOffered, LeadHired, LeadRejected, LeadWithdrawn}

// LeadStatuses returns every lead status, in enum order.
func LeadStatuses() []LeadStatus { return slices.Clone(leadStatuses) }

// RejectionReason says why a driver was rejected.
type RejectionReason string

var rejectionReasons = []RejectionReason{"experience", "license", "endorsements", "driving_record", "psp",
	"clearinghouse", "location", "no_response", "position_filled", "other"}

// RejectionReasons returns every rejection reason, in enum order.
func RejectionReasons() []RejectionReason { return slices.Clone(rejectionReasons) }

// The limits of a status change.
const (
	// MaxStatusNote is the most characters a status note may hold.
	MaxStatusNote = 1000
	// MaxStatusAhead is how far past the service's clock a change's
	// changedAt may be: an employer's clock a little ahead is accepted, a
	// date typed a day wrong is not, since it would make every later
	// correction stale.
	MaxStatusAhead = 5 * time.Minute
)

// StatusChange is an employer's word on one driver: the status, the
// reason of a rejection, a note, and when it happened in the employer's
// own system.
type StatusChange struct {
	Status LeadStatus
	// Reason is "" for none.
	Reason RejectionReason
	// Note is plain text; "" for none.
	Note      string
	ChangedAt time.Time
}

// SameAs says whether c says what the stored status s already says: such
// a change adds no history and no event.
func (c StatusChange) SameAs(s StatusChange) bool {
	return c.Status == s.Status && c.Reason == s.Reason && c.Note == s.Note
}

// FieldProblem is a rule one value breaks: the field as the caller named
// it, the value as sent, and the rule in words.
type FieldProblem struct {
	Field, Value, Rule string
}

func (p FieldProblem) Error() string { return fmt.Sprintf("%s: %q %s", p.Field, p.Value, p.Rule) }

// ReadStatusChange checks a change as sent, its status, reason and note
// as text and changedAt as a time (nil: now), against the rules of
// docs/api.md at the service's time now. It returns every problem, first
// to last field; the change is valid when there is none.
func ReadStatusChange(status, reason, note string, changedAt *time.Time, now time.Time) (StatusChange, []FieldProblem) {
	// Times are kept to the microsecond, as the store keeps them: a replay
	// of the same change, nanoseconds and all, then compares equal rather
	// than older than the stored time PostgreSQL rounded.
	c := StatusChange{Status: LeadStatus(status), Reason: RejectionReason(reason), Note: note, ChangedAt: now.UTC().Truncate(time.Microsecond)}
	var problems []FieldProblem
	switch {
	case status == "":
		problems = append(problems, FieldProblem{"status", status, "is required; allowed: " + strings.Join(Names(leadStatuses), ", ")})
	case !slices.Contains(leadStatuses, c.Status):
		problems = append(problems, FieldProblem{"status", status, "is not a status; allowed: " + strings.Join(Names(leadStatuses), ", ")})
	}
	switch {
	case reason == "":
	case !slices.Contains(rejectionReasons, c.Reason):
		problems = append(problems, FieldProblem{"reason", reason, "is not a rejection reason; allowed: " + strings.Join(Names(rejectionReasons), ", ")})
	case c.Status != LeadRejected:
		problems = append(problems, FieldProblem{"reason", reason, "is allowed only with status rejected"})
	}
	if p, ok := checkNote(note); !ok {
		problems = append(problems, p)
	}
	if changedAt != nil {
		c.ChangedAt = changedAt.UTC().Truncate(time.Microsecond)
		if c.ChangedAt.After(now.Add(MaxStatusAhead)) {
			problems = append(problems, FieldProblem{"changedAt", changedAt.UTC().Format(time.RFC3339),
				fmt.Sprintf("is more than %s ahead of the service's time %s", MaxStatusAhead, now.UTC().Format(time.RFC3339))})
		}
	}
	return c, problems
}

// checkNote applies a note's rules: plain text of at most MaxStatusNote
// characters, with no control character but tab and line breaks.
func checkNote(note string) (FieldProblem, bool) {
	switch {
	case !utf8.ValidString(note):
		return FieldProblem{"note", strings.ToValidUTF8(note, "\uFFFD"), "is not valid UTF-8"}, false
	case strings.ContainsFunc(note, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f }):
		return FieldProblem{"note", note, "must not contain control characters other than tab and line breaks"}, false
	}
	if n := utf8.RuneCountInString(note); n > MaxStatusNote {
		return FieldProblem{"note", note, fmt.Sprintf("is %d characters, more than the %d allowed", n, MaxStatusNote)}, false
	}
	return FieldProblem{}, true
}

// maxWordQuoted is the most characters of a word a rule quotes: the value
// itself is cut by whoever shows it, and a rule must not repeat in full
// what the value's cut left out.
const maxWordQuoted = 32

// cutWord is w, cut to maxWordQuoted characters with an ellipsis.
func cutWord(w string) string {
	if utf8.RuneCountInString(w) <= maxWordQuoted {
		return w
	}
	return string([]rune(w)[:maxWordQuoted]) + "…"
}

// MaxStatusFilter is the most statuses the drivers list's status filter
// names.
const MaxStatusFilter = 10

// ReadStatusFilter reads the drivers list's status filter as sent: lead
// statuses separated by commas, any case, spaces around each ignored, at
// most MaxStatusFilter. It returns the distinct statuses in enum order,
// and none when the text names every status: that filter keeps every
// driver, and leaving it out lets the list use the counts of the others.
func ReadStatusFilter(text string) ([]LeadStatus, *FieldProblem) {
	words := strings.Split(text, ",")
	if len(words) > MaxStatusFilter {
		return nil, &FieldProblem{"status", text, fmt.Sprintf("names %d statuses; at most %d", len(words), MaxStatusFilter)}
	}
	named := map[LeadStatus]bool{}
	for _, w := range words {
		s := LeadStatus(strings.ToLower(strings.TrimSpace(w)))
		if !slices.Contains(leadStatuses, s) {
			return nil, &FieldProblem{"status", text, fmt.Sprintf("holds %q, which is not a status; allowed: %s, separated by commas",
				cutWord(strings.TrimSpace(w)), strings.Join(Names(leadStatuses), ", "))}
		}
		named[s] = true
	}
	var out []LeadStatus
	for _, s := range leadStatuses {
		if named[s] {
			out = append(out, s)
		}
	}
	if len(out) == len(leadStatuses) {
		return nil, nil
	}
	return out, nil
}
