package decode

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// MaxXMLDepth is how many levels of elements an unknown field may nest,
// counting its own element as the first (docs/api.md, Formats); known fields
// hold text only.
const MaxXMLDepth = 32

// itemLimit is how many elements a list body may hold, and the refusal
// once it holds more, said while the body is read.
type itemLimit struct {
	max     int
	refusal string
}

func (l itemLimit) exceeded() error { return errors.New(l.refusal) }

var (
	// listItems bounds a post's jobs: a post processes
	// rules.MaxJobsPerPost jobs and reports each further one as a limit
	// error, so past the bound the answer would only grow.
	listItems = itemLimit{rules.MaxListItems, fmt.Sprintf(
		"the body lists more than %d items; a post processes the first %s jobs, so send the rest in further requests",
		rules.MaxListItems, groupThousands(rules.MaxJobsPerPost))}
	// deleteItems bounds a delete's ids or reference numbers by the same
	// number, refused in words about deleting.
	deleteItems = itemLimit{rules.MaxListItems, fmt.Sprintf(
		"the body lists more than %d items; a delete takes at most %s ids or reference numbers, so send the rest in further requests",
		rules.MaxListItems, groupThousands(rules.MaxListItems))}
	// importJobs bounds the jobs of an import.
	importJobs = itemLimit{rules.MaxImportJobs, fmt.Sprintf("jobs: an import holds at most %d jobs", rules.MaxImportJobs)}
)

// groupThousands writes n with a comma between groups of three digits, as
// the messages write counts people read: 1,000.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// XML fills a request message from an XML body: a jobs root whose job
// children are job records (post) or ids and reference numbers (deletes).
func XML(data []byte, msg any) error {
	d := &xmlReader{dec: xml.NewDecoder(bytes.NewReader(data))}
	// encoding/xml asks for a reader only for an encoding other than
	// UTF-8, and words the refusal in text of its own: the fact is kept
	// here instead, for xmlError.
	d.dec.CharsetReader = func(label string, _ io.Reader) (io.Reader, error) {
		d.otherCharset = true
		return nil, fmt.Errorf("encoding %q is not accepted", label)
	}
	var err error
	switch m := msg.(type) {
	case *restv2.PostJobsRequest:
		err = d.jobs(listItems, func(i int) error {
			j, err := d.job(i)
			m.Jobs = append(m.Jobs, j)
			return err
		})
	case *restv2.DeleteJobsRequest:
		err = d.jobs(deleteItems, func(i int) error {
			v, err := d.text(fmt.Sprintf("/jobs/job[%d]", i+1), 1, false)
			m.Ids = append(m.Ids, v)
			return err
		})
	case *restv2.DeleteJobsByReferenceRequest:
		err = d.jobs(deleteItems, func(i int) error {
			v, err := d.text(fmt.Sprintf("/jobs/job[%d]", i+1), 1, false)
			m.ReferenceNumbers = append(m.ReferenceNumbers, v)
			return err
		})
	default:
		return errors.New("this request takes no body")
	}
	if err != nil {
		return xmlError(err, d.otherCharset)
	}
	return nil
}

type xmlReader struct {
	dec *xml.Decoder
	// named is the current job's field elements so far.
	named namedMembers
	// otherCharset is set when the document declared an encoding other
	// than UTF-8.
	otherCharset bool
}

// next returns the next token that matters: elements, their text, the end of
// input. Comments and processing instructions are skipped; a DOCTYPE, which
// could declare entities, is refused in any letter case, and so is every
// other <!...> declaration, which no jobs document needs.
func (d *xmlReader) next() (xml.Token, error) {
	for {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, err
		}
		switch tok.(type) {
		case xml.Directive:
			return nil, errors.New("XML with a DOCTYPE (or any other <!...> declaration) is not accepted")
		case xml.Comment, xml.ProcInst:
		default:
			return tok, nil
		}
	}
}

// jobs reads the jobs root and calls item for each job child, refusing
// more than limit allows.
func (d *xmlReader) jobs(limit itemLimit, item func(i int) error) error {
	var root xml.StartElement
	for {
		tok, err := d.next()
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = se
			break
		}
		if cd, ok := tok.(xml.CharData); !ok || len(bytes.TrimSpace(cd)) > 0 {
			return errors.New("the body must be a <jobs> document")
		}
	}
	if root.Name.Local != "jobs" {
		return fmt.Errorf("the root element must be <jobs>, not <%s>", root.Name.Local)
	}
	for i := 0; ; {
		tok, err := d.next()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "job" {
				return fmt.Errorf("/jobs: expected <job> elements, found <%s>", t.Name.Local)
			}
			if i == limit.max {
				return limit.exceeded()
			}
			if err := item(i); err != nil {
				return err
			}
			i++
		case xml.EndElement:
			return d.end()
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return errors.New("/jobs: text outside <job> elements")
			}
		}
	}
}

// end checks that nothing but whitespace follows the root element.
func (d *xmlReader) end() error {
	for {
		tok, err := d.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if cd, ok := tok.(xml.CharData); !ok || len(bytes.TrimSpace(cd)) > 0 {
			return errors.New("unexpected content after the </jobs> root element")
		}
	}
}

// job reads one <job> record after its start tag, through its end tag.
func (d *xmlReader) job(i int) (*restv2.JobInput, error) {
	j := &restv2.JobInput{}
	d.named.reset()
	for {
		tok, err := d.next()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			field := jobFields[name]
			v, err := d.text(fmt.Sprintf("/jobs/job[%d]/%s", i+1, name), 1, field == nil)
			if err != nil {
				return nil, err
			}
			// A list field repeats its element by design; any other
			// element given twice keeps its first value and refuses the job.
			if (field == nil || field.list == nil) && d.named.again(field, name) {
				d.named.repeat(name, &v)
				continue
			}
			field.set(j, name, &v)
		case xml.EndElement:
			j.RepeatedFields = d.named.repeated
			return j, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("/jobs/job[%d]: text outside field elements", i+1)
			}
		}
	}
}

// text reads the character data (CDATA included) of the element just
// opened, through its end tag. Nested elements are refused unless nested is
// true, when their text is gathered too. level is how deep the element sits
// in the field, the field's own element being level 1.
func (d *xmlReader) text(path string, level int, nested bool) (string, error) {
	if level > MaxXMLDepth {
		return "", fmt.Errorf("%s: elements nested deeper than %d levels", path, MaxXMLDepth)
	}
	var b strings.Builder
	for {
		tok, err := d.next()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		case xml.StartElement:
			if !nested {
				return "", fmt.Errorf("%s: expected text, found element <%s>", path, t.Name.Local)
			}
			s, err := d.text(path+"/"+t.Name.Local, level+1, true)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
	}
}

// xmlError words decoder errors for people; otherCharset says the document
// declared an encoding other than UTF-8.
func xmlError(err error, otherCharset bool) error {
	var syntax *xml.SyntaxError
	switch {
	case otherCharset:
		return errors.New("the body must be XML in UTF-8; no other encoding is accepted")
	case errors.As(err, &syntax):
		// The parser quotes the bytes it stumbled on, which need not be
		// UTF-8; a message must be.
		return fmt.Errorf("malformed XML at line %d: %s", syntax.Line, strings.ToValidUTF8(syntax.Msg, "\uFFFD"))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("malformed XML: the body ends too soon")
	}
	return err
}
