#include "io/files/checkpoint_slots.hpp"

#include <cstddef>

namespace grayscott::io {

CheckpointSlots::CheckpointSlots(std::int64_t members)
    : members_(members), images_(2 * static_cast<std::size_t>(members), 0) {}

std::int64_t CheckpointSlots::images(int slot, std::int64_t member) const {
  return images_[static_cast<std::size_t>(slot * members_ + member)];
}

std::int64_t& CheckpointSlots::at(int slot, std::int64_t member) {
  return images_[static_cast<std::size_t>(slot * members_ + member)];
}

void CheckpointSlots::save(std::int64_t member_begin, std::int64_t member_count,
                           std::int64_t images_done, bool final_state, const SlotWrites& writes) {
  save_into_older_slot(member_begin, member_count, images_done, writes);
  if (final_state && images(0, member_begin) != images(1, member_begin)) {
    save_into_older_slot(member_begin, member_count, images_done, writes);
  }
}

void CheckpointSlots::save_into_older_slot(std::int64_t member_begin, std::int64_t member_count,
                                           std::int64_t images_done, const SlotWrites& writes) {
  const int slot = older(member_begin);
  // Members continued together need not have saved together (another rank count or batch size
  // before): a member whose newer state is in this slot has it marked invalid first, so that a
  // crash while the slot is rewritten leaves it its older, whole checkpoint. A lone member's
  // older slot never holds its newer state.
  bool invalidated = false;
  for (std::int64_t m = member_begin; m < member_begin + member_count; ++m) {
    if (at(slot, m) > images(1 - slot, m)) {
      at(slot, m) = 0;
      invalidated = true;
    }
  }
  if (invalidated) {
    writes.write_marks(slot, 1);
    writes.make_marks_durable();
  }
  writes.write_state(slot);
  writes.make_state_durable();
  for (std::int64_t m = member_begin; m < member_begin + member_count; ++m)
    at(slot, m) = images_done;
  writes.write_marks(slot, 1);
  writes.make_marks_durable();
}

void CheckpointSlots::save_into_both_slots(std::int64_t member_begin, std::int64_t member_count,
                                           std::int64_t images_done, const SlotWrites& writes) {
  writes.write_state(0);
  writes.write_state(1);
  writes.make_state_durable();
  for (int slot = 0; slot < 2; ++slot) {
    for (std::int64_t m = member_begin; m < member_begin + member_count; ++m) {
      at(slot, m) = images_done;
    }
  }
  writes.write_marks(0, 2);
  writes.make_marks_durable();
}

}  // namespace grayscott::io
