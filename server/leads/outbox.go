package leads

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/truckjobs/jobboard/server/drivers"

	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
)

// Outbox writes lead events in the transaction that stores what they
// report, and queues their deliveries in it: a committed application or
// import completion always has its event, a rolled-back one never does.
type Outbox struct {
	// queue inserts the deliveries; it need not work them (the CLI's
	// client has no workers: the server's queue does).
	queue *store.Queue
	// render writes an event's data as the REST API shows the object.
	render func(proto.Message) ([]byte, error)
}

// NewOutbox returns the outbox inserting deliveries through queue and
// rendering event data with render (gateway/render.JSON).
func NewOutbox(queue *store.Queue, render func(proto.Message) ([]byte, error)) (*Outbox, error) {
	if queue == nil || render == nil {
		return nil, errors.New("outbox: a queue and a renderer are required")
	}
	return &Outbox{queue: queue, render: render}, nil
}

// Write stores events of one account in tx and queues their deliveries.
// The deliveries are queued first, under event ids made here, so that the
// account's event sequence row, which InsertEvents takes, is held only for
// that one statement and the commit: other writers of the account's events
// wait as briefly as can be. Call it last in tx.
func (o *Outbox) Write(ctx context.Context, tx *store.Tx, accountID int64, events []store.NewEvent) ([]store.Event, error) {
	queued := make([]store.Event, len(events))
	for i := range events {
		events[i].ID = store.NewEventUUID()
		queued[i] = store.Event{ID: store.EventID(events[i].ID), AccountID: accountID, Type: events[i].Type}
	}
	if err := queueDeliveries(ctx, o.queue, tx, queued); err != nil {
		return nil, err
	}
	return tx.InsertEvents(ctx, accountID, events)
}

// ApplicationsReceived writes one driver.application.received event per
// application in tx, the batch's last step after tx.SaveApplications.
// Each event's data is the driver as GET drivers.json/{id} shows the
// account, read after the whole batch is saved: the events are created as
// the transaction ends, so two applications of one driver in a batch both
// carry the driver's final state, which is what the account sees once the
// batch commits.
func (o *Outbox) ApplicationsReceived(ctx context.Context, tx *store.Tx, apps []store.Application, ids []int64) error {
	if len(apps) == 0 {
		return nil
	}
	// The intake stores a batch for one account; group anyway, so the
	// events of each account are numbered by its own sequence.
	var accounts []int64
	byAccount := map[int64][]int64{}
	for i, a := range apps {
		if _, seen := byAccount[a.AccountID]; !seen {
			accounts = append(accounts, a.AccountID)
		}
		byAccount[a.AccountID] = append(byAccount[a.AccountID], ids[i])
	}
	for _, account := range accounts {
		events, err := o.driverEvents(ctx, tx, account, byAccount[account])
		if err != nil {
			return err
		}
		if _, err := o.Write(ctx, tx, account, events); err != nil {
			return err
		}
	}
	return nil
}

// driverEvents renders the application events of an account's drivers,
// one per id in order (an id given twice gets two events), reading every
// driver at once.
func (o *Outbox) driverEvents(ctx context.Context, tx *store.Tx, accountID int64, ids []int64) ([]store.NewEvent, error) {
	details, err := tx.DriverDetails(ctx, accountID, ids)
	if err != nil {
		return nil, err
	}
	rendered := make(map[int64][]byte, len(details))
	events := make([]store.NewEvent, len(ids))
	for i, id := range ids {
		data, ok := rendered[id]
		if !ok {
			d, found := details[id]
			if !found {
				return nil, fmt.Errorf("application event: driver %d of account %d not found after saving", id, accountID)
			}
			if data, err = o.renderData(drivers.Detail(&d, drivers.Include{})); err != nil {
				return nil, err
			}
			rendered[id] = data
		}
		events[i] = store.NewEvent{Type: domain.EventApplicationReceived, Data: data, DriverID: id}
	}
	return events, nil
}

// renderData is m's REST JSON without the renderer's final newline: the
// text an event stores and the feed and deliveries write back verbatim.
func (o *Outbox) renderData(m proto.Message) ([]byte, error) {
	data, err := o.render(m)
	if err != nil {
		return nil, fmt.Errorf("render event data: %w", err)
	}
	return bytes.TrimRight(data, " \t\r\n"), nil
}

// Event is an event of type t whose data is m as the REST API shows the
// object, for a transaction to Write.
func (o *Outbox) Event(t domain.EventType, m proto.Message) (store.NewEvent, error) {
	data, err := o.renderData(m)
	if err != nil {
		return store.NewEvent{}, err
	}
	return store.NewEvent{Type: t, Data: data}, nil
}

// StatusesChanged writes one driver.status.changed event per change of
// the account's drivers' statuses in tx, after the statuses are stored.
// Each event's data is the change as docs/api.md shows it, made from the
// change itself: nothing is read back.
func (o *Outbox) StatusesChanged(ctx context.Context, tx *store.Tx, accountID int64, changes []store.StatusChanged) error {
	if len(changes) == 0 {
		return nil
	}
	events := make([]store.NewEvent, len(changes))
	for i, c := range changes {
		e, err := o.Event(domain.EventStatusChanged, statusChangeData(c))
		if err != nil {
			return err
		}
		e.DriverID = c.DriverID
		events[i] = e
	}
	_, err := o.Write(ctx, tx, accountID, events)
	return err
}

// statusChangeData is the data of a driver.status.changed event.
func statusChangeData(c store.StatusChanged) *restv2.DriverStatusChange {
	d := &restv2.DriverStatusChange{DriverId: c.DriverID, Status: string(c.Status), PreviousStatus: string(c.Previous),
		ChangedAt: c.ChangedAt.UTC().Format(call.TimeFormat)}
	if c.Reason != "" {
		d.Reason = new(string(c.Reason))
	}
	if c.Note != "" {
		d.Note = new(c.Note)
	}
	return d
}
