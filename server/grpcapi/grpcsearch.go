package grpcapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/search"
)

// grpcSearch serves jobboard.v2.JobSearchService over the core search.
type grpcSearch struct {
	jobboardv2.UnimplementedJobSearchServiceServer
	core *search.Service
}

// SearchJobs reads the request's enums into the domain's words (an
// unknown number is INVALID_ARGUMENT naming the field), and answers the
// core's page.
func (g *grpcSearch) SearchJobs(ctx context.Context, req *jobboardv2.SearchJobsRequest) (*jobboardv2.SearchJobsResponse, error) {
	if err := call.CheckText(req); err != nil {
		return nil, err
	}
	var problems []call.FieldViolation
	r := search.Request{
		Query: req.GetQuery(), PostalCode: req.GetPostalCode(), RadiusMiles: req.GetRadiusMiles(),
		States: req.GetStates(), ExcludeTWICOnly: req.GetExcludeTwicOnly(), MinPayCents: req.MinPayCents,
		PostedWithinDays: req.GetPostedWithinDays(), AccountIDs: req.GetAccountIds(),
		PageSize: req.GetPageSize(), PageToken: req.GetPageToken(),
	}
	r.DriverTypes = enumWords(&problems, "driver_types", req.GetDriverTypes(), domain.DriverTypes())
	r.FreightTypes = enumWords(&problems, "freight_types", req.GetFreightTypes(), domain.FreightTypes())
	r.RouteTypes = enumWords(&problems, "route_types", req.GetRouteTypes(), domain.RouteTypes())
	r.EmploymentTypes = enumWords(&problems, "employment_types", req.GetEmploymentTypes(), domain.EmploymentTypes())
	r.PayFrequencies = enumWords(&problems, "pay_frequencies", req.GetPayFrequencies(), domain.PayFrequencies())
	if c, classes := req.GetLicenseClass(), domain.LicenseClasses(); c < 0 || int(c) > len(classes) {
		problems = append(problems, unknownEnum("license_class", int32(c), domain.Names(classes)))
	} else if c != jobboardv2.LicenseClass_LICENSE_CLASS_UNSPECIFIED {
		r.LicenseClass = classes[c-1]
	}
	switch o := req.GetOrderBy(); o {
	case jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_UNSPECIFIED:
	case jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_RELEVANCE:
		r.Order = search.OrderRelevance
	case jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_DISTANCE:
		r.Order = search.OrderDistance
	case jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_POSTED:
		r.Order = search.OrderPosted
	case jobboardv2.JobSearchOrder_JOB_SEARCH_ORDER_PAY:
		r.Order = search.OrderPay
	default:
		problems = append(problems, unknownEnum("order_by", int32(o), enumNames(jobboardv2.JobSearchOrder_name)))
	}
	for i, f := range req.GetFacets() {
		facet, ok := facets[f]
		if !ok {
			problems = append(problems, unknownEnum(fmt.Sprintf("facets[%d]", i), int32(f), enumNames(jobboardv2.JobFacet_name)))
			continue
		}
		r.Facets = append(r.Facets, facet)
	}
	if len(problems) > 0 {
		// The core's problems too, so that one answer names every field;
		// the request is refused whether or not the core could check it
		// (its ZIP lookup needs the database).
		if more, err := g.core.Problems(ctx, r); err == nil {
			problems = append(problems, more...)
		}
		return nil, call.InvalidArgument(problems...)
	}
	page, err := g.core.Search(ctx, r)
	if err != nil {
		return nil, err
	}
	out := &jobboardv2.SearchJobsResponse{
		TotalSize: page.TotalSize, TotalSizeIsEstimate: page.TotalSizeIsEstimate, NextPageToken: page.NextPageToken,
		Results: make([]*jobboardv2.JobSearchResult, len(page.Results)),
	}
	for i, res := range page.Results {
		out.Results[i] = &jobboardv2.JobSearchResult{
			Job: natural.Job(&res.Job), AccountId: res.AccountID, AccountName: res.AccountName,
			DistanceMiles: res.DistanceMiles, Highlights: res.Highlights,
		}
	}
	for _, fc := range page.Facets {
		counts := &jobboardv2.JobFacetCounts{Facet: facetEnums[fc.Facet]}
		for _, v := range fc.Values {
			counts.Values = append(counts.Values, &jobboardv2.JobFacetValue{
				Value: facetValueName(fc.Facet, v.Value), Label: v.Value, Count: v.Count})
		}
		out.Facets = append(out.Facets, counts)
	}
	return out, nil
}

// facets are the request's facets in the core's terms; facetEnums the other way.
var (
	facets = map[jobboardv2.JobFacet]search.Facet{
		jobboardv2.JobFacet_JOB_FACET_DRIVER_TYPE:     search.FacetDriverType,
		jobboardv2.JobFacet_JOB_FACET_FREIGHT_TYPE:    search.FacetFreightType,
		jobboardv2.JobFacet_JOB_FACET_ROUTE_TYPE:      search.FacetRouteType,
		jobboardv2.JobFacet_JOB_FACET_EMPLOYMENT_TYPE: search.FacetEmploymentType,
		jobboardv2.JobFacet_JOB_FACET_PAY_FREQUENCY:   search.FacetPayFrequency,
		jobboardv2.JobFacet_JOB_FACET_STATE:           search.FacetState,
		jobboardv2.JobFacet_JOB_FACET_LICENSE_CLASS:   search.FacetLicenseClass,
	}
	facetEnums = func() map[search.Facet]jobboardv2.JobFacet {
		out := make(map[search.Facet]jobboardv2.JobFacet, len(facets))
		for e, f := range facets {
			out[f] = e
		}
		return out
	}()
)

// facetValueName is the name a request's filter gives a facet's value
// (the REST spelling label): the enum value's name, or the state's code.
func facetValueName(f search.Facet, label string) string {
	name := func(words []string, enum func(int32) string) string {
		for i, w := range words {
			if w == label {
				return enum(int32(i + 1))
			}
		}
		return label
	}
	switch f {
	case search.FacetDriverType:
		return name(domain.Names(domain.DriverTypes()), func(n int32) string { return jobboardv2.DriverType(n).String() })
	case search.FacetFreightType:
		return name(domain.Names(domain.FreightTypes()), func(n int32) string { return jobboardv2.FreightType(n).String() })
	case search.FacetRouteType:
		return name(domain.Names(domain.RouteTypes()), func(n int32) string { return jobboardv2.RouteType(n).String() })
	case search.FacetEmploymentType:
		return name(domain.Names(domain.EmploymentTypes()), func(n int32) string { return jobboardv2.EmploymentType(n).String() })
	case search.FacetPayFrequency:
		return name(domain.Names(domain.PayFrequencies()), func(n int32) string { return jobboardv2.PayFrequency(n).String() })
	case search.FacetLicenseClass:
		return name(domain.Names(domain.LicenseClasses()), func(n int32) string { return jobboardv2.LicenseClass(n).String() })
	}
	return label
}

// enumWords reads enum values 1..n as words[0..n-1] (the order the domain
// and the protos share); UNSPECIFIED or a number past them is a problem
// naming field[i].
func enumWords[E ~int32, W ~string](problems *[]call.FieldViolation, field string, es []E, words []W) []W {
	out := make([]W, 0, len(es))
	for i, e := range es {
		if e < 1 || int(e) > len(words) {
			*problems = append(*problems, unknownEnum(fmt.Sprintf("%s[%d]", field, i), int32(e), domain.Names(words)))
			// An empty word holds its place: the core's rules count the
			// values sent (one pay frequency for a minimum pay), and the
			// request is refused before any word is used.
			out = append(out, "")
			continue
		}
		out = append(out, words[e-1])
	}
	return out
}

// unknownEnum is the problem of an enum number the field has no value
// for, naming the values it has, as the intake's problems do.
func unknownEnum(field string, n int32, allowed []string) call.FieldViolation {
	return call.FieldViolation{Field: field, Label: field,
		Description: fmt.Sprintf("%q is not one of %s", fmt.Sprint(n), strings.Join(allowed, ", "))}
}

// enumNames are the names of an enum's values past UNSPECIFIED, in order.
func enumNames(names map[int32]string) []string {
	out := make([]string, 0, len(names)-1)
	for n := int32(1); n < int32(len(names)); n++ {
		out = append(out, names[n])
	}
	return out
}
