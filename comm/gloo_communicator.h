// The Gloo backend: one rank per process, connected over TCP by Gloo
// (Debian's libgloo-dev). For CPU clusters; started by the launcher
// (launcher.h) with torchrun-style environment variables.
//
// Example (in each of the N processes):
//   GlooOptions o;
//   o.rank = rank;  o.size = n;  o.master_addr = "127.0.0.1";  o.master_port = 29500;
//   absl::StatusOr<std::unique_ptr<Communicator>> world = ConnectGloo(o);
//   if (world.ok()) status = (*world)->Barrier();
//
// Rendezvous: rank 0 serves a key-value store (kv_store.h) on
// master_addr:master_port; every rank publishes its Gloo pair addresses
// there and connects a full mesh (gloo::rendezvous::Context::
// connectFullMesh); a last store barrier makes sure every rank connected
// before any returns. Only clients that hold the job secret get into the
// store (kv_store.h); once every rank joined it takes no new connections.
// After that each rank keeps its store connection for the heartbeat.
//
// Heartbeat: every rank tells the store it is alive every heartbeat_timeout
// / 4; the store answers with the ranks it has not heard from for more than
// heartbeat_timeout. A rank that learns of a silent peer (a stopped or hung
// process: its sockets stay open, so Gloo alone would wait for the whole
// call timeout) aborts its transport with kUnavailable naming that rank; a
// store that does not answer within heartbeat_timeout names rank 0. When a
// call fails for another reason, the error also names a silent rank if the
// store knows one, so the blame lands on the rank that stopped, not on the
// healthy rank that noticed first.
//
// Transport: Gloo's TCP pairs with unbound buffers. Every message of a
// step is posted (send/recv with the message tag as Gloo slot) before any
// wait, and every wait gets the call's remaining time. Gloo reports errors
// by throwing (gloo::IoException, gloo::EnforceNotMet, ...); they are
// caught here and become absl::Status:
//   - a peer process that dies closes its sockets; the pairs to it fail at
//     once with "connection closed/reset", and a wait on them returns
//     kUnavailable naming the peer;
//   - a wait that reaches the deadline is kDeadlineExceeded;
//   - any failure aborts this rank's transport: it closes all of its
//     connections, so every peer waiting on it fails too (kUnavailable), and
//     the failure spreads along the chain of waiting ranks within
//     milliseconds instead of each rank waiting out its own timeout.
// Sub-groups share the one full mesh (no new connections).
//
// Process-wide effect: Gloo writes with writev, which raises SIGPIPE when a
// peer has gone. ConnectGloo sets SIGPIPE to ignored if it still has the
// default disposition (as Python, and so torch, does), so that a dead peer
// becomes an error status instead of killing this process.
#ifndef COMM_GLOO_COMMUNICATOR_H_
#define COMM_GLOO_COMMUNICATOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/communicator.h"

namespace oneflow_sbp::comm {

struct GlooOptions {
  int rank = 0;
  int size = 1;
  // Where rank 0 serves the rendezvous store; every rank connects there.
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // required: 1 .. 65535
  // The address this rank's Gloo pairs listen on and advertise to peers.
  // Empty: the local address of this rank's connection to the store, i.e.
  // the interface that reaches the master (127.0.0.1 on one machine).
  std::string hostname;
  // For the whole rendezvous (waiting for late ranks included).
  absl::Duration connect_timeout = absl::Seconds(60);
  // For calls that do not set their own timeout.
  absl::Duration default_timeout = absl::Seconds(60);
  // The job secret every rank shares (job_auth.h); required.
  std::string job_secret;
  // A rank silent for longer is reported (see the header comment); zero
  // turns the heartbeat off.
  absl::Duration heartbeat_timeout = absl::Seconds(10);
};

// Joins the world described by `options` (see the header comment).
// kInvalidArgument for bad options (an empty job secret included);
// kPermissionDenied when the store on master_port has another secret; kDeadlineExceeded if the other ranks
// do not all arrive within connect_timeout; kUnavailable if the store
// cannot be served (port taken) or reached, or Gloo cannot connect.
absl::StatusOr<std::unique_ptr<Communicator>> ConnectGloo(const GlooOptions& options);

}  // namespace oneflow_sbp::comm

#endif  // COMM_GLOO_COMMUNICATOR_H_
