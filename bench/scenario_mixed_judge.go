package main

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The verdicts of scenario 7, kept apart from the running of it so that
// tests can feed them made-up answers.

// mixedVerdict is the judgement of a class, or of one posting account, on
// the tail and starvation rules.
type mixedVerdict struct {
	served   int
	refused  []time.Duration
	inFlight int
	// median is that of the served answers; p99 covers also the requests
	// still in flight at the end, at their least possible wait, so that a
	// request never answered cannot leave the tail.
	median, p99 time.Duration
	perConn     float64 // served per connection
	ofMean      float64 // perConn over the mean of all connections
}

func judgeMixedPart(r h2loadResult, want, conns int, meanPerConn float64) mixedVerdict {
	served := r.of(want)
	v := mixedVerdict{served: len(served), refused: r.of(http.StatusServiceUnavailable), inFlight: len(r.inFlight),
		median: summarize(served).median, p99: summarize(append(slices.Clone(served), r.inFlight...)).p99}
	v.perConn = float64(len(served)) / float64(max(1, conns))
	if meanPerConn > 0 {
		v.ofMean = v.perConn / meanPerConn
	}
	return v
}

// tailRatio is p99 over the median, infinite when nothing was served.
func (v mixedVerdict) tailRatio() float64 {
	if v.median <= 0 {
		return math.Inf(1)
	}
	return float64(v.p99) / float64(v.median)
}

func (v mixedVerdict) tailOK() bool { return v.served > 0 && v.tailRatio() <= mixedTailRatio }

func (v mixedVerdict) fed() bool { return v.ofMean >= mixedStarvedBelow }

// mixedRows judges each class of a level and the level's refusals, and
// sums the level up; capacity is the first level's served throughput, 0
// when this is the first level. It returns the level's served throughput.
func mixedRows(classes []*mixedClass, run mixedLevelRun, capacity float64) ([]result, float64) {
	label := fmt.Sprintf("mixed, %d connections, %.0f s: ", run.level, run.d.Seconds())
	var served, refused, conns int64
	var refusals []time.Duration
	var cpu float64
	for _, c := range classes {
		served += c.result.count(c.want)
		refused += c.result.count(http.StatusServiceUnavailable)
		refusals = append(refusals, c.result.of(http.StatusServiceUnavailable)...)
		conns += int64(c.conns)
		cpu += c.result.cpu
	}
	meanPerConn := float64(served) / float64(max(1, conns))
	var rows []result
	allMet := true
	for _, c := range classes {
		row := judgeMixedClass(c, meanPerConn)
		if len(c.accounts) > 0 {
			row.note += " " + run.postedNote
		}
		row.name = label + c.name
		allMet = allMet && row.pass
		rows = append(rows, row)
	}
	perSecond := float64(served) / classes[0].result.elapsed.Seconds()
	all := h2loadResult{cpu: cpu}
	admission := judgeAdmission(served, refusals, perSecond, capacity)
	admission.name = label + "refusals (503 of admission control)"
	admission.note += " " + all.cpuNote()
	if run.refusalNote != "" {
		admission.note += " " + run.refusalNote
	}
	note := fmt.Sprintf("%d served, %d refused with 503 (%.1f%%). %s h2load (%d processes) used %.0f%% of the machine's cores in all.",
		served, refused, 100*float64(refused)/float64(max(1, served+refused)), run.serverNote, run.processes, 100*cpu)
	rows = append(rows, admission, result{name: label + "all classes", throughput: perSecond,
		target: "every class met", pass: allMet, note: note})
	return rows, perSecond
}

// judgeAdmission is a level's row on what admission control refused. At
// the first level, within the service's capacity, hardly any request may
// be refused; past it refusals are the point, but each must come fast and
// the served work must go on at the first level's pace.
func judgeAdmission(served int64, refusals []time.Duration, perSecond, capacity float64) result {
	slices.Sort(refusals)
	s := summarize(refusals)
	share := float64(len(refusals)) / float64(max(1, served+int64(len(refusals))))
	row := result{median: s.median, p99: s.p99, throughput: perSecond}
	row.note = fmt.Sprintf("%d of %d answers refused with 503 (%.2f%%)", len(refusals), served+int64(len(refusals)), 100*share)
	if len(refusals) > 0 {
		row.note += fmt.Sprintf(", answered in %s median, %s p99 (the median and p99 columns)", ms(s.median), ms(s.p99))
	}
	row.note += fmt.Sprintf("; %.0f served/s.", perSecond)
	if capacity == 0 {
		row.target = fmt.Sprintf("within capacity: < %.0f%% of answers refused", 100*mixedRefusedWithin)
		row.pass = share < mixedRefusedWithin
		return row
	}
	row.target = fmt.Sprintf("refusals' p99 ≤ %s; served/s ≥ %.1fx the first level's %.0f/s", ms(mixedRefusalP99), mixedKeepServing, capacity)
	row.pass = s.p99 <= mixedRefusalP99 && perSecond >= mixedKeepServing*capacity
	row.note += fmt.Sprintf(" Served %.2fx the first level.", perSecond/capacity)
	return row
}

// judgeMixedClass is a class's row: served latency and throughput, what
// was refused and how fast, what was still in flight at the end, and the
// verdict on its rules; the posts' class is met only when each of its
// accounts meets the tail and starvation rules too.
func judgeMixedClass(c *mixedClass, meanPerConn float64) result {
	r := c.result
	v := judgeMixedPart(r, c.want, c.conns, meanPerConn)
	errs := r.failed
	var other []string
	for status, l := range r.latencies {
		if status != c.want && status != http.StatusServiceUnavailable {
			errs += int64(len(l))
			other = append(other, fmt.Sprintf("%d× %d", len(l), status))
		}
	}
	note := fmt.Sprintf("%d connections; %d served (%.1f per connection, %.2fx the mean), %d refused with 503 (%.1f%% of answers)",
		c.conns, v.served, v.perConn, v.ofMean, len(v.refused), 100*float64(len(v.refused))/float64(max(1, v.served+len(v.refused))))
	if len(v.refused) > 0 {
		rs := summarize(v.refused)
		note += fmt.Sprintf(" in %s median, %s p99", ms(rs.median), ms(rs.p99))
	}
	note += fmt.Sprintf("; %d errors", errs)
	if len(other) > 0 {
		slices.Sort(other)
		note += " (" + strings.Join(other, ", ") + ")"
	}
	if r.failed > 0 {
		note += fmt.Sprintf(" (%d without an answer)", r.failed)
	}
	if r.statusless > 0 {
		note += fmt.Sprintf("; %d answered across the start of the duration, their status line in the warm-up (h2load records statuses in the duration only), left out", r.statusless)
	}
	note += fmt.Sprintf("; %d still in flight at the end, counted in the p99 at their least possible wait", v.inFlight)
	if v.inFlight > 0 {
		note += fmt.Sprintf(" (up to at least %s)", ms(r.inFlight[len(r.inFlight)-1]))
	}
	note += fmt.Sprintf(". p99/median %.2f. %s", v.tailRatio(), r.cpuNote())
	target := fmt.Sprintf("p99 ≤ %.0fx median; served per connection ≥ %.2fx the mean; 0 errors but 503", mixedTailRatio, mixedStarvedBelow)
	accountsMet := true
	if len(c.accounts) > 0 {
		var accountsNote string
		accountsMet, accountsNote = judgeAccounts(c, meanPerConn)
		target += "; the same for each account"
		note += " " + accountsNote
	}
	return result{median: v.median, p99: v.p99, throughput: float64(v.served) / r.elapsed.Seconds(),
		target: target, pass: v.tailOK() && v.fed() && errs == 0 && accountsMet, note: note}
}

// judgeAccounts judges each posting account alone and says so briefly: the
// worst account on each rule, those not met, and a compact list.
func judgeAccounts(c *mixedClass, meanPerConn float64) (bool, string) {
	var missed, each []string
	worstTail, leastFed := -1, -1
	var verdicts []mixedVerdict
	for i, a := range c.accounts {
		v := judgeMixedPart(a.result, c.want, a.conns, meanPerConn)
		verdicts = append(verdicts, v)
		if !v.tailOK() || !v.fed() {
			missed = append(missed, fmt.Sprint(i+1))
		}
		if worstTail < 0 || v.tailRatio() > verdicts[worstTail].tailRatio() {
			worstTail = i
		}
		if leastFed < 0 || v.ofMean < verdicts[leastFed].ofMean {
			leastFed = i
		}
		each = append(each, fmt.Sprintf("%d: %.2fx, %.2f", i+1, v.ofMean, v.tailRatio()))
	}
	met := fmt.Sprintf("all %d met", len(c.accounts))
	if len(missed) > 0 {
		met = fmt.Sprintf("%d not met: account %s", len(missed), strings.Join(missed, ", "))
	}
	note := fmt.Sprintf("Each posting account judged alone (%d connections each): %s; worst p99/median %.2f (account %d), least served per connection %.2fx the mean (account %d). Per account, served per connection over the mean and p99/median: %s.",
		c.accounts[0].conns, met, verdicts[worstTail].tailRatio(), worstTail+1, verdicts[leastFed].ofMean, leastFed+1, strings.Join(each, "; "))
	return len(missed) == 0, note
}
