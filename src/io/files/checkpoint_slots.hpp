// The checkpoint that run files and sweep files both keep, and the order in which it is saved.
// Each member (a run is one) has two slots of its state and, per slot, the images done when that
// state was saved (/checkpoint/images; 0: empty, or being rewritten). A save goes into the older
// slot and marks it valid only once the state is durable, so that a crash at any moment leaves
// every member one whole checkpoint. The final state goes into both slots, so that a finished
// file does not depend on when the run saved before (a continued run's file is then the
// uninterrupted one's).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace grayscott::io {

// What a file does for each step of a save; CheckpointSlots says in which order.
struct SlotWrites {
  // The state of the members saved into `slot` (which is not yet marked valid).
  std::function<void(int slot)> write_state;
  // The images done of those members at slots [first_slot, first_slot + slots), as
  // CheckpointSlots holds them, into the file's marks.
  std::function<void(int first_slot, int slots)> write_marks;
  // Makes the state written (and the images it follows) durable, before any mark says so.
  std::function<void()> make_state_durable;
  // Makes the marks written durable.
  std::function<void()> make_marks_durable;
};

class CheckpointSlots {
 public:
  // `members` members, every slot empty.
  explicit CheckpointSlots(std::int64_t members = 1);
  // The marks as the file stores them: slot after slot, each `members` values.
  std::vector<std::int64_t>& marks() { return images_; }
  const std::vector<std::int64_t>& marks() const { return images_; }
  std::int64_t members() const { return members_; }

  // Images done at `slot` of `member`; 0: no valid state there.
  std::int64_t images(int slot, std::int64_t member) const;
  // The slot a save of `member` goes into: the older one.
  int older(std::int64_t member) const { return images(0, member) <= images(1, member) ? 0 : 1; }
  // The slot its newest checkpoint is in.
  int newest(std::int64_t member) const { return images(0, member) >= images(1, member) ? 0 : 1; }
  // Images done at its newest checkpoint; 0: none.
  std::int64_t newest_images(std::int64_t member) const { return images(newest(member), member); }
  // Whether neither slot of `member` holds a valid state.
  bool empty(std::int64_t member) const { return images(0, member) == 0 && images(1, member) == 0; }

  // Saves members [member_begin, member_begin + member_count)'s state after `images_done` images
  // into their older slot (the first member's: a batch's members share their history), and, when
  // it is the final state, into the other slot too.
  void save(std::int64_t member_begin, std::int64_t member_count, std::int64_t images_done,
            bool final_state, const SlotWrites& writes);
  // Saves into the older slot only.
  void save_into_older_slot(std::int64_t member_begin, std::int64_t member_count,
                            std::int64_t images_done, const SlotWrites& writes);
  // Saves into both slots at once, with half the waits for the disk: only where the members have
  // no valid checkpoint to keep meanwhile.
  void save_into_both_slots(std::int64_t member_begin, std::int64_t member_count,
                            std::int64_t images_done, const SlotWrites& writes);

 private:
  std::int64_t& at(int slot, std::int64_t member);
  std::int64_t members_;
  std::vector<std::int64_t> images_;  // [2][members]
};

}  // namespace grayscott::io
