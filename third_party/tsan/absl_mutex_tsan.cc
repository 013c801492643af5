// Teaches ThreadSanitizer about absl::Mutex, linked only under --config=tsan.
//
// Why: Debian's libabsl_synchronization.so is not built with -fsanitize=thread,
// so its Lock/Unlock are invisible to tsan. Every access guarded by an
// absl::Mutex in our (instrumented) code would then look unsynchronized, and
// tsan would drown real races in false ones. Abseil's own tsan support (the
// __tsan_mutex_* annotations in mutex.cc) only exists when Abseil itself is
// compiled with tsan, which a system package is not.
//
// How: this file defines the out-of-line absl::Mutex entry points our code
// and Abseil's other libraries call. The definitions in the executable take
// precedence over the shared library's (ELF symbol interposition); each one
// tells tsan what the lock operation means (__tsan_mutex_pre/post_lock,
// pre/post_unlock) and forwards to the real function found with
// dlsym(RTLD_NEXT). tsan ignores memory accesses between the pre and post
// annotations, which covers Abseil's own uninstrumented state and the
// Condition callbacks it evaluates while it holds the lock internally (even
// on another thread's behalf, during that thread's Unlock).
//
// Await* and LockWhen* release and re-acquire the lock inside; they are
// modelled as an unlock before the wait and a lock after it. Await is
// assumed to be called under an exclusive (writer) lock, as every caller in
// this repository does.
//
// Not covered: absl::CondVar (not used here). Build with --config=tsan only;
// in other builds this file is not compiled.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#define OFS_STR2(x) #x
#define OFS_STR(x) OFS_STR2(x)

namespace {

// The mangled name of absl::<ns>::Mutex::<rest>, where <ns> is the inline
// namespace the system Abseil was built with (absl/base/options.h).
std::string MutexSymbol(const char* rest) {
  const std::string ns = OFS_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  return "_ZN4absl" + std::to_string(ns.size()) + ns + "5Mutex" + rest;
}

// The shared library's definition of a Mutex member, resolved once. A
// missing symbol is an unusable build setup, so it aborts with a message.
template <typename Fn>
Fn Real(const char* rest) {
  const std::string name = MutexSymbol(rest);
  void* sym = dlsym(RTLD_NEXT, name.c_str());
  if (sym == nullptr) {
    std::fprintf(stderr, "absl_mutex_tsan: %s not found after the executable\n", name.c_str());
    std::abort();
  }
  return reinterpret_cast<Fn>(sym);
}

using VoidFn = void (*)(absl::Mutex*);
using BoolFn = bool (*)(absl::Mutex*);
using CondFn = void (*)(absl::Mutex*, const absl::Condition&);
using CondTimeoutFn = bool (*)(absl::Mutex*, const absl::Condition&, absl::Duration);
using CondDeadlineFn = bool (*)(absl::Mutex*, const absl::Condition&, absl::Time);

// Abseil's entry points call each other through the PLT (AwaitWithTimeout
// calls AwaitWithDeadline, which lands here again); only the outermost call
// on a thread is annotated.
thread_local int depth = 0;
struct Nest {
  Nest() { ++depth; }
  ~Nest() { --depth; }
  bool outer() const { return depth == 1; }
};

constexpr unsigned kRead = __tsan_mutex_read_lock;
constexpr unsigned kTry = __tsan_mutex_try_lock;
constexpr unsigned kTryFailed = __tsan_mutex_try_lock_failed;

// Wraps a call that takes the lock (flags: 0 or kRead).
template <typename F>
auto Locking(absl::Mutex* mu, unsigned flags, F&& call) {
  Nest nest;
  if (!nest.outer()) return call();
  __tsan_mutex_pre_lock(mu, flags);
  auto r = call();
  __tsan_mutex_post_lock(mu, flags, 0);
  return r;
}

// Wraps a call that drops the lock (flags: 0 or kRead).
template <typename F>
void Unlocking(absl::Mutex* mu, unsigned flags, F&& call) {
  Nest nest;
  if (!nest.outer()) return call();
  __tsan_mutex_pre_unlock(mu, flags);
  call();
  __tsan_mutex_post_unlock(mu, flags);
}

// Wraps a call that tries to take the lock (flags: 0 or kRead).
template <typename F>
bool Trying(absl::Mutex* mu, unsigned flags, F&& call) {
  Nest nest;
  if (!nest.outer()) return call();
  __tsan_mutex_pre_lock(mu, flags | kTry);
  const bool ok = call();
  __tsan_mutex_post_lock(mu, ok ? flags | kTry : flags | kTry | kTryFailed, 0);
  return ok;
}

// Wraps a call that drops a held writer lock, waits, and takes it back.
template <typename F>
auto Waiting(absl::Mutex* mu, F&& call) {
  Nest nest;
  if (!nest.outer()) return call();
  __tsan_mutex_pre_unlock(mu, 0);
  auto r = call();
  __tsan_mutex_post_unlock(mu, 0);
  __tsan_mutex_pre_lock(mu, 0);
  __tsan_mutex_post_lock(mu, 0, 0);
  return r;
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

Mutex::~Mutex() {
  static const VoidFn real = Real<VoidFn>("D2Ev");
  __tsan_mutex_destroy(this, 0);
  real(this);
}

void Mutex::Lock() {
  static const VoidFn real = Real<VoidFn>("4LockEv");
  Locking(this, 0, [&] { return (real(this), 0); });
}

void Mutex::ReaderLock() {
  static const VoidFn real = Real<VoidFn>("10ReaderLockEv");
  Locking(this, kRead, [&] { return (real(this), 0); });
}

bool Mutex::TryLock() {
  static const BoolFn real = Real<BoolFn>("7TryLockEv");
  return Trying(this, 0, [&] { return real(this); });
}

bool Mutex::ReaderTryLock() {
  static const BoolFn real = Real<BoolFn>("13ReaderTryLockEv");
  return Trying(this, kRead, [&] { return real(this); });
}

void Mutex::Unlock() {
  static const VoidFn real = Real<VoidFn>("6UnlockEv");
  Unlocking(this, 0, [&] { real(this); });
}

void Mutex::ReaderUnlock() {
  static const VoidFn real = Real<VoidFn>("12ReaderUnlockEv");
  Unlocking(this, kRead, [&] { real(this); });
}

void Mutex::LockWhen(const Condition& cond) {
  static const CondFn real = Real<CondFn>("8LockWhenERKNS0_9ConditionE");
  Locking(this, 0, [&] { return (real(this, cond), 0); });
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  static const CondFn real = Real<CondFn>("14ReaderLockWhenERKNS0_9ConditionE");
  Locking(this, kRead, [&] { return (real(this, cond), 0); });
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  static const CondTimeoutFn real =
      Real<CondTimeoutFn>("19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Locking(this, 0, [&] { return real(this, cond, timeout); });
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  static const CondDeadlineFn real =
      Real<CondDeadlineFn>("20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Locking(this, 0, [&] { return real(this, cond, deadline); });
}

void Mutex::Await(const Condition& cond) {
  static const CondFn real = Real<CondFn>("5AwaitERKNS0_9ConditionE");
  Waiting(this, [&] { return (real(this, cond), 0); });
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  static const CondTimeoutFn real =
      Real<CondTimeoutFn>("16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Waiting(this, [&] { return real(this, cond, timeout); });
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static const CondDeadlineFn real =
      Real<CondDeadlineFn>("17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Waiting(this, [&] { return real(this, cond, deadline); });
}

ABSL_NAMESPACE_END
}  // namespace absl
