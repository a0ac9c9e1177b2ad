package imports

import (
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/store"
)

// ImportResponse is a stored import as GetJobImport answers it, for the
// operator commands that show one in the API's shape.
func ImportResponse(imp store.JobImport) (*restv2.GetJobImportResponse, error) {
	msg, err := importMessage(imp)
	if err != nil {
		return nil, err
	}
	return &restv2.GetJobImportResponse{Data: msg, Links: importLinks(imp)}, nil
}
