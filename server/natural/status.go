package natural

import (
	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// The lead statuses' vocabularies, in the order of their enums.
var (
	LeadStatuses     = vocabularyOf[jobboardv2.LeadStatus](domain.LeadStatuses())
	RejectionReasons = vocabularyOf[jobboardv2.RejectionReason](domain.RejectionReasons())
)

// EnumText is the label of e, "" for UNSPECIFIED, and the enum number as
// text for a number outside the vocabulary, which the rules then refuse
// with the value named.
func EnumText[E ~int32](v Vocabulary[E], e E) string {
	if l := optionalLabel(v, e); l != nil {
		return *l
	}
	return ""
}
