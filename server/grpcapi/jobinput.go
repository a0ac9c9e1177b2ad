package grpcapi

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/jobs"
	"github.com/truckjobs/jobboard/server/natural"
)

// jobInput reads a natural job into the domain's types: enum values as
// their words, amounts as the cents they are, with nothing to parse. An
// enum number outside its words is unread, quoted as its digits;
// UNSPECIFIED is a field not sent.
func jobInput(in *jobboardv2.JobInput) jobs.Input {
	r := jobs.NewInput()
	for i, field := range natural.JobFieldTable {
		f, v := jobs.Field(i), field.Read(in)
		switch field.Kind {
		case domain.TextField, domain.HTMLField:
			r.Sent[f] = v.Text
			field.SetText(&r.JobInput, v.Text)
		case domain.WordField:
			field.SetText(&r.JobInput, word(&r, f, field, v.Enum))
		case domain.WordsField:
			field.SetWordList(&r.JobInput, wordList(&r, f, field, v.Enums))
		case domain.AmountField:
			if v.Cents != nil {
				r.Sent[f] = new(strconv.FormatInt(*v.Cents, 10))
				field.SetAmount(&r.JobInput, new(domain.Cents(*v.Cents)))
			}
		case domain.FlagField:
			r.Sent[f] = new(strconv.FormatBool(v.Flag))
			field.SetFlag(&r.JobInput, v.Flag)
		}
	}
	return r
}

// word is an enum value's word; nil for UNSPECIFIED, and for a number
// outside the field's words, which is unread.
func word(r *jobs.Input, f jobs.Field, field natural.JobField, e int32) *string {
	if e == 0 {
		return nil
	}
	w, ok := natural.WordOf(field.JobField, e)
	if !ok {
		r.Sent[f] = new(strconv.Itoa(int(e)))
		unknownValue(r, f, field, r.Sent[f], "")
		return nil
	}
	r.Sent[f] = new(w)
	return new(w)
}

// wordList is a list of enum values' words, UNSPECIFIED skipped. Numbers
// outside the field's words make it unread, with one entry quoting the
// first and counting the others, as are lists longer than the v2.0 API
// takes.
func wordList(r *jobs.Input, f jobs.Field, field natural.JobField, es []int32) []string {
	if len(es) > jobs.MaxListValues {
		r.Unread = append(r.Unread, jobs.Unread{Field: f, Value: new(numbersCut(es)),
			Message: fmt.Sprintf("%s: %d values were sent; at most %d are accepted", field.Name, len(es), jobs.MaxListValues)})
		return nil
	}
	var out []string
	var firstBad *string
	bad := 0
	for _, e := range es {
		if e == 0 {
			continue
		}
		w, ok := natural.WordOf(field.JobField, e)
		if !ok {
			if firstBad == nil {
				firstBad = new(strconv.Itoa(int(e)))
			}
			bad++
			continue
		}
		out = append(out, w)
	}
	if bad > 0 {
		more := ""
		if bad > 1 {
			more = fmt.Sprintf(" (nor are %d more of the values sent)", bad-1)
		}
		unknownValue(r, f, field, firstBad, more)
		return nil
	}
	return out
}

// numbersCut writes enum numbers comma-separated, as far as an entry
// echoes (call.MaxEchoed): a list as long as a request may hold is never
// written whole just to be cut.
func numbersCut(es []int32) string {
	var b strings.Builder
	for i, e := range es {
		if b.Len() > call.MaxEchoed {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(e)))
	}
	return call.Truncate(b.String(), call.MaxEchoed)
}

// unknownValue records an enum number outside the field's words.
func unknownValue(r *jobs.Input, f jobs.Field, field natural.JobField, sent *string, more string) {
	r.Unread = append(r.Unread, jobs.Unread{Field: f, Value: sent,
		Message: fmt.Sprintf("%s: %s is not one of %s%s", field.Name, call.Quoted(*sent), strings.Join(field.Words, ", "), more)})
}
