package domain

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReadStatusChange(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { return new(now.Add(d)) }
	tests := []struct {
		name                 string
		status, reason, note string
		changedAt            *time.Time
		want                 StatusChange
		problems             []string // the fields named, in order
	}{
		{name: "status alone, now", status: "reviewing", want: StatusChange{Status: LeadReviewing, ChangedAt: now}},
		{name: "rejected with a reason and a note", status: "rejected", reason: "psp", note: "PSP shows\ttwo crashes\r\n",
			changedAt: at(-time.Hour), want: StatusChange{Status: LeadRejected, Reason: "psp", Note: "PSP shows\ttwo crashes\r\n", ChangedAt: now.Add(-time.Hour)}},
		{name: "nanoseconds kept to the microsecond", status: "hired", changedAt: at(-1500 * time.Nanosecond),
			want: StatusChange{Status: LeadHired, ChangedAt: now.Add(-2 * time.Microsecond)}},
		{name: "changedAt at the limit ahead", status: "hired", changedAt: at(MaxStatusAhead),
			want: StatusChange{Status: LeadHired, ChangedAt: now.Add(MaxStatusAhead)}},
		{name: "changedAt past the limit", status: "hired", changedAt: at(MaxStatusAhead + time.Second), problems: []string{"changedAt"}},
		{name: "no status", problems: []string{"status"}},
		{name: "status in other case", status: "Hired", problems: []string{"status"}},
		{name: "reason with another status", status: "hired", reason: "psp", problems: []string{"reason"}},
		{name: "unknown reason", status: "rejected", reason: "attitude", problems: []string{"reason"}},
		{name: "note of 1,000 characters", status: "offered", note: strings.Repeat("é", MaxStatusNote),
			want: StatusChange{Status: LeadOffered, Note: strings.Repeat("é", MaxStatusNote), ChangedAt: now}},
		{name: "note too long", status: "offered", note: strings.Repeat("a", MaxStatusNote+1), problems: []string{"note"}},
		{name: "note with NUL", status: "offered", note: "a\x00b", problems: []string{"note"}},
		{name: "note not UTF-8", status: "offered", note: "a\xffb", problems: []string{"note"}},
		{name: "every field wrong", status: "gone", reason: "x", note: "\x07", changedAt: at(time.Hour),
			problems: []string{"status", "reason", "note", "changedAt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := ReadStatusChange(tt.status, tt.reason, tt.note, tt.changedAt, now)
			var fields []string
			for _, p := range problems {
				fields = append(fields, p.Field)
				if p.Rule == "" {
					t.Errorf("%s: no rule in %+v", p.Field, p)
				}
			}
			if strings.Join(fields, ",") != strings.Join(tt.problems, ",") {
				t.Fatalf("problems %v, want fields %v", problems, tt.problems)
			}
			if len(tt.problems) == 0 && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestStatusChangeSameAs(t *testing.T) {
	stored := StatusChange{Status: LeadRejected, Reason: "psp", Note: "n", ChangedAt: time.Unix(1, 0)}
	if !(StatusChange{Status: LeadRejected, Reason: "psp", Note: "n", ChangedAt: time.Unix(9, 0)}).SameAs(stored) {
		t.Error("a change differing only in its time is not the same")
	}
	for _, c := range []StatusChange{
		{Status: LeadHired, Note: "n"}, {Status: LeadRejected, Reason: "other", Note: "n"}, {Status: LeadRejected, Reason: "psp"},
	} {
		if c.SameAs(stored) {
			t.Errorf("%+v is the same as %+v", c, stored)
		}
	}
}

func TestReadStatusFilter(t *testing.T) {
	tests := []struct {
		text    string
		want    []LeadStatus
		problem string // a part of the rule broken; "" for none
	}{
		{text: "hired", want: []LeadStatus{LeadHired}},
		{text: " Rejected , new,REJECTED", want: []LeadStatus{LeadNew, LeadRejected}},
		{text: "withdrawn,reviewing,contacted", want: []LeadStatus{LeadReviewing, LeadContacted, LeadWithdrawn}},
		{text: "new,reviewing,contacted,interviewing,offered,hired,rejected,withdrawn", want: nil},
		{text: "new,new,new,new,new,new,new,new,new,hired", want: []LeadStatus{LeadNew, LeadHired}},
		{text: "new,new,new,new,new,new,new,new,new,new,new", problem: "names 11 statuses; at most 10"},
		{text: "new,,hired", problem: `holds "", which is not a status`},
		{text: "hired,", problem: `holds "", which is not a status`},
		{text: "hired,gone", problem: `holds "gone", which is not a status; allowed: new, reviewing`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, problem := ReadStatusFilter(tt.text)
			switch {
			case tt.problem == "" && problem != nil:
				t.Fatalf("problem %v, want none", problem)
			case tt.problem != "" && (problem == nil || !strings.Contains(problem.Rule, tt.problem)):
				t.Fatalf("problem %v, want one saying %q", problem, tt.problem)
			case problem != nil && (problem.Field != "status" || problem.Value != tt.text):
				t.Errorf("problem %+v names another field or value", problem)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("statuses %q, want %q", got, tt.want)
			}
		})
	}
}
