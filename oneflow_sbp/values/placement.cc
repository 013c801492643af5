#include "oneflow_sbp/values/placement.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

absl::string_view DeviceTypeName(DeviceType type) {
  return type == DeviceType::kCpu ? "cpu" : "cuda";
}

absl::StatusOr<DeviceType> ParseDeviceType(absl::string_view text) {
  const std::string t = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  if (t == "cpu") return DeviceType::kCpu;
  if (t == "cuda" || t == "gpu") return DeviceType::kCuda;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device type ", QuotedInput(text), ": expected cpu or cuda"));
}

Placement::Placement() {
  static const std::shared_ptr<const Rep>* const kDefault = [] {
    absl::StatusOr<Placement> p = Make(DeviceType::kCpu, {0}, {});
    OFS_CHECK(p.ok());
    return new std::shared_ptr<const Rep>(p->rep_);
  }();
  rep_ = *kDefault;
}

absl::StatusOr<Placement> Placement::Make(DeviceType type,
                                          absl::Span<const int64_t> ranks,
                                          absl::Span<const int64_t> hierarchy) {
  if (ranks.empty()) {
    return absl::InvalidArgumentError("placement has no ranks");
  }
  if (static_cast<int64_t>(ranks.size()) > kMaxParallelNum) {
    return absl::InvalidArgumentError(absl::StrCat(
        "placement has ", ranks.size(), " ranks; at most ", kMaxParallelNum,
        " are supported"));
  }
  auto rep = std::make_shared<Rep>();
  rep->device_type = type;
  rep->ranks.assign(ranks.begin(), ranks.end());
  std::sort(rep->ranks.begin(), rep->ranks.end());
  for (size_t i = 0; i < rep->ranks.size(); ++i) {
    if (rep->ranks[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("placement rank ", rep->ranks[i], " is negative"));
    }
    if (i > 0 && rep->ranks[i] == rep->ranks[i - 1]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "placement lists rank ", rep->ranks[i], " more than once"));
    }
  }
  const int64_t n = static_cast<int64_t>(rep->ranks.size());
  if (hierarchy.empty()) {
    rep->hierarchy.push_back(n);
  } else {
    if (hierarchy.size() > NdSbp::kMaxAxes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hierarchy [", absl::StrJoin(hierarchy, ","), "] has ",
          hierarchy.size(), " axes; at most ", NdSbp::kMaxAxes,
          " are supported"));
    }
    // The product is tracked only up to n, so it never overflows.
    int64_t product = 1;
    bool exceeds = false;
    for (int64_t h : hierarchy) {
      if (h < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("hierarchy [", absl::StrJoin(hierarchy, ","),
                         "] has extent ", h, "; every extent must be >= 1"));
      }
      if (exceeds || product > n / h) {
        exceeds = true;
      } else {
        product *= h;
      }
      rep->hierarchy.push_back(h);
    }
    if (exceeds || product != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hierarchy [", absl::StrJoin(hierarchy, ","), "] holds ",
          exceeds ? absl::StrCat("more than ", n) : absl::StrCat(product),
          (!exceeds && product == 1) ? " device" : " devices", " but the placement lists ", n,
          n == 1 ? " rank" : " ranks"));
    }
  }
  rep->strides.resize(rep->hierarchy.size());
  int64_t stride = 1;
  for (int i = static_cast<int>(rep->hierarchy.size()) - 1; i >= 0; --i) {
    rep->strides[i] = stride;
    stride *= rep->hierarchy[i];
  }
  rep->hash = absl::HashOf(static_cast<int>(type), rep->ranks, rep->hierarchy);
  return Placement(std::move(rep));
}

namespace {

// The text after "<device>:", cut at the hierarchy's brackets.
struct PlacementBody {
  absl::string_view rank_text;
  // Between '[' and ']'; absent without brackets.
  std::optional<absl::string_view> hierarchy_text;
};

// Every message names the whole `text` the caller passed to Parse.
absl::StatusOr<PlacementBody> SplitPlacementBody(absl::string_view text,
                                                 absl::string_view rest) {
  PlacementBody body;
  body.rank_text = rest;
  const size_t bracket = rest.find('[');
  if (bracket != absl::string_view::npos) {
    body.rank_text = rest.substr(0, bracket);
    const size_t close = rest.find(']', bracket);
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed placement ", QuotedInput(text), ": hierarchy lacks a closing ']'"));
    }
    body.hierarchy_text = rest.substr(bracket + 1, close - bracket - 1);
    const absl::string_view trailing = absl::StripAsciiWhitespace(rest.substr(close + 1));
    if (!trailing.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed placement ", QuotedInput(text), ": trailing characters ",
          QuotedInput(trailing), " after the hierarchy's ']'"));
    }
  }
  body.rank_text = absl::StripAsciiWhitespace(body.rank_text);
  return body;
}

// A rank or an extent `s` of the placement `text`.
absl::Status ParsePlacementInt(absl::string_view text, absl::string_view s, int64_t* out) {
  s = absl::StripAsciiWhitespace(s);
  bool digits = !s.empty();
  for (char c : s) digits = digits && absl::ascii_isdigit(c);
  if (!digits) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed placement ", QuotedInput(text), ": ", QuotedInput(s),
        " is not a non-negative integer"));
  }
  // Ranks and extents beyond 12 digits are far past any limit; saying
  // "too large" is truer than "not an integer".
  if (s.size() > 12 || !absl::SimpleAtoi(s, out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed placement ", QuotedInput(text), ": ", QuotedInput(s),
        " is too large (a placement has at most ", Placement::kMaxParallelNum, " ranks)"));
  }
  return absl::OkStatus();
}

// "0-3,6,8-9" of the placement `text`, ranges expanded in the order written.
absl::StatusOr<std::vector<int64_t>> ParseRankList(absl::string_view text,
                                                   absl::string_view rank_text) {
  if (rank_text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed placement ", QuotedInput(text), ": no ranks after ':'"));
  }
  std::vector<int64_t> ranks;
  for (absl::string_view item : absl::StrSplit(rank_text, ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(item, '-');
    if (ends.size() > 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed placement ", QuotedInput(text), ": bad rank range ", QuotedInput(item)));
    }
    int64_t lo = 0;
    int64_t hi = 0;
    absl::Status s = ParsePlacementInt(text, ends[0], &lo);
    OFS_RETURN_IF_ERROR(s);
    hi = lo;
    if (ends.size() == 2) {
      s = ParsePlacementInt(text, ends[1], &hi);
      OFS_RETURN_IF_ERROR(s);
      if (hi < lo) {
        return absl::InvalidArgumentError(absl::StrCat(
            "malformed placement ", QuotedInput(text), ": rank range ", QuotedInput(item),
            " runs backwards"));
      }
    }
    if (hi - lo + 1 + static_cast<int64_t>(ranks.size()) > Placement::kMaxParallelNum) {
      return absl::InvalidArgumentError(absl::StrCat("placement ", QuotedInput(text),
                                                     " has more than ",
                                                     Placement::kMaxParallelNum, " ranks"));
    }
    for (int64_t r = lo; r <= hi; ++r) ranks.push_back(r);
  }
  return ranks;
}

// "2,4" of the placement `text`; Placement::Make checks the extents.
absl::StatusOr<std::vector<int64_t>> ParseHierarchy(absl::string_view text,
                                                    absl::string_view hierarchy_text) {
  const std::vector<absl::string_view> items = absl::StrSplit(hierarchy_text, ',');
  if (items.size() > static_cast<size_t>(NdSbp::kMaxAxes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad placement ", QuotedInput(text), ": hierarchy has ", items.size(),
        " axes; at most ", NdSbp::kMaxAxes, " are supported"));
  }
  std::vector<int64_t> hierarchy;
  for (absl::string_view item : items) {
    int64_t h = 0;
    absl::Status s = ParsePlacementInt(text, item, &h);
    OFS_RETURN_IF_ERROR(s);
    hierarchy.push_back(h);
  }
  return hierarchy;
}

}  // namespace

absl::StatusOr<Placement> Placement::Parse(absl::string_view text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  if (body.empty()) {
    return absl::InvalidArgumentError(
        "empty placement: expected e.g. cpu:0-3 or cuda:0-7 [2,4]");
  }
  const size_t colon = body.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed placement ", QuotedInput(text),
        ": expected <device>:<ranks>[ [hierarchy]], e.g. cpu:0-3 [2,2]"));
  }
  absl::StatusOr<DeviceType> type = ParseDeviceType(body.substr(0, colon));
  if (!type.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed placement ", QuotedInput(text), ": ", type.status().message()));
  }
  OFS_ASSIGN_OR_RETURN(PlacementBody parts, SplitPlacementBody(text, body.substr(colon + 1)));
  OFS_ASSIGN_OR_RETURN(std::vector<int64_t> ranks, ParseRankList(text, parts.rank_text));
  std::vector<int64_t> hierarchy;
  if (parts.hierarchy_text.has_value()) {
    OFS_ASSIGN_OR_RETURN(std::vector<int64_t> parsed, ParseHierarchy(text, *parts.hierarchy_text));
    hierarchy = std::move(parsed);
  }
  absl::StatusOr<Placement> placement = Make(*type, ranks, hierarchy);
  if (!placement.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad placement ", QuotedInput(text), ": ", placement.status().message()));
  }
  return placement;
}

int64_t Placement::RankOf(int64_t parallel_id) const {
  OFS_CHECK(parallel_id >= 0 && parallel_id < parallel_num()) << parallel_id;
  return rep_->ranks[parallel_id];
}

absl::StatusOr<int64_t> Placement::ParallelIdOf(int64_t rank) const {
  auto it = std::lower_bound(rep_->ranks.begin(), rep_->ranks.end(), rank);
  if (it == rep_->ranks.end() || *it != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " is not in placement ", ToString()));
  }
  return it - rep_->ranks.begin();
}

MeshCoord Placement::CoordinateOf(int64_t parallel_id) const {
  OFS_CHECK(parallel_id >= 0 && parallel_id < parallel_num()) << parallel_id;
  MeshCoord coord(rep_->hierarchy.size());
  for (size_t i = 0; i < coord.size(); ++i) {
    coord[i] = (parallel_id / rep_->strides[i]) % rep_->hierarchy[i];
  }
  return coord;
}

int64_t Placement::ParallelIdAt(absl::Span<const int64_t> coord) const {
  OFS_CHECK(coord.size() == rep_->hierarchy.size()) << coord.size();
  int64_t id = 0;
  for (size_t i = 0; i < coord.size(); ++i) {
    OFS_CHECK(coord[i] >= 0 && coord[i] < rep_->hierarchy[i]) << coord[i];
    id += coord[i] * rep_->strides[i];
  }
  return id;
}

std::vector<int64_t> Placement::SubGroup(int64_t parallel_id,
                                         MeshAxisMask axes) const {
  const MeshCoord base = CoordinateOf(parallel_id);
  // Enumerate the free axes row-major (last free axis fastest), which keeps
  // the result ascending.
  std::vector<int> free_axes;
  int64_t count = 1;
  for (int i = 0; i < num_axes(); ++i) {
    if (axes & AxisBit(i)) {
      free_axes.push_back(i);
      count *= rep_->hierarchy[i];
    }
  }
  std::vector<int64_t> group;
  group.reserve(count);
  MeshCoord coord = base;
  for (int a : free_axes) coord[a] = 0;
  // The parallel id follows the coordinate: one stride per step, no
  // re-ravelling (groups of 16,384 ranks are built in the boxing planner).
  int64_t id = ParallelIdAt(coord);
  for (int64_t k = 0; k < count; ++k) {
    group.push_back(id);
    for (int j = static_cast<int>(free_axes.size()) - 1; j >= 0; --j) {
      const int a = free_axes[j];
      id += rep_->strides[a];
      if (++coord[a] < rep_->hierarchy[a]) break;
      id -= rep_->strides[a] * rep_->hierarchy[a];
      coord[a] = 0;
    }
  }
  return group;
}

std::vector<std::vector<int64_t>> Placement::SubGroups(MeshAxisMask axes) const {
  std::vector<std::vector<int64_t>> groups;
  std::vector<bool> seen(parallel_num(), false);
  for (int64_t id = 0; id < parallel_num(); ++id) {
    if (seen[id]) continue;
    groups.push_back(SubGroup(id, axes));
    for (int64_t member : groups.back()) seen[member] = true;
  }
  return groups;
}

bool Placement::EqualsIgnoringHierarchy(const Placement& other) const {
  return rep_ == other.rep_ || (rep_->device_type == other.rep_->device_type &&
                                rep_->ranks == other.rep_->ranks);
}

std::string Placement::RanksToString() const {
  std::string out;
  const std::vector<int64_t>& r = rep_->ranks;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j == i) {
      absl::StrAppend(&out, r[i]);
    } else {
      absl::StrAppend(&out, r[i], "-", r[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string Placement::ToString() const {
  std::string out = absl::StrCat(DeviceTypeName(rep_->device_type), ":",
                                 RanksToString());
  if (rep_->hierarchy.size() >= 2) {
    absl::StrAppend(&out, " [", absl::StrJoin(rep_->hierarchy, ","), "]");
  }
  return out;
}

bool Placement::EqualReps(const Rep& a, const Rep& b) {
  return a.hash == b.hash && a.device_type == b.device_type && a.ranks == b.ranks &&
         a.hierarchy == b.hierarchy;
}

}  // namespace oneflow_sbp
