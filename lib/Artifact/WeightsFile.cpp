//===- WeightsFile.cpp ----------------------------------------------------===//

#include "Artifact/WeightsFile.h"

#include <cassert>
#include <cstring>
#include <random>

namespace cohere2c {

namespace {

constexpr char kMagic[16] = "COHERE2CWEIGHTS"; // and its '\0'
constexpr size_t kVersionOffset = 16, kIdOffset = 24, kIdBytes = 16,
                 kSizeOffset = 40;
constexpr const char *kRemedy =
    ": recompile, or pass --checkpoint DIR or --random-weights SEED";

void storeLE(unsigned char *p, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    p[i] = (unsigned char)(value >> (8 * i));
}

uint64_t loadLE(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= (uint64_t)p[i] << (8 * i);
  return value;
}

std::string hex(const unsigned char *bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

} // namespace

bool isWeightsId(const std::string &id) {
  return id.empty() ||
         (id.size() == 2 * kIdBytes &&
          id.find_first_not_of("0123456789abcdef") == std::string::npos);
}

std::string newWeightsId() {
  std::random_device device;
  unsigned char bytes[kIdBytes];
  for (size_t i = 0; i < kIdBytes; i += 4)
    storeLE(bytes + i, device(), 4); // random_device gives 32 bits per call
  return hex(bytes, kIdBytes);
}

void writeWeightsHeader(void *header, const std::string &id,
                        uint64_t dataBytes) {
  auto *p = static_cast<unsigned char *>(header);
  std::memset(p, 0, kWeightsHeaderBytes);
  std::memcpy(p, kMagic, sizeof(kMagic));
  storeLE(p + kVersionOffset, kWeightsFormatVersion, 4);
  assert(isWeightsId(id) && !id.empty() && "an id from newWeightsId()");
  auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < kIdBytes; ++i)
    p[kIdOffset + i] =
        (unsigned char)(digit(id[2 * i]) << 4 | digit(id[2 * i + 1]));
  storeLE(p + kSizeOffset, dataBytes, 8);
}

Status checkWeightsHeader(const void *header, uint64_t fileBytes,
                          const std::string &path, const std::string &id,
                          uint64_t dataBytes) {
  const auto *p = static_cast<const unsigned char *>(header);
  if (fileBytes < kWeightsHeaderBytes)
    return Status::error(path + ": " + std::to_string(fileBytes) +
                         " bytes, shorter than the " +
                         std::to_string(kWeightsHeaderBytes) +
                         "-byte header of a weights file" + kRemedy);
  if (std::memcmp(p, kMagic, sizeof(kMagic)))
    return Status::error(path + ": not a cohere2c weights file (no " +
                         "COHERE2CWEIGHTS header)" + kRemedy);
  uint64_t version = loadLE(p + kVersionOffset, 4);
  if (version != kWeightsFormatVersion)
    return Status::error(path + ": weights file format version " +
                         std::to_string(version) + ", expected " +
                         std::to_string(kWeightsFormatVersion) + kRemedy);
  uint64_t size = loadLE(p + kSizeOffset, 8);
  if (size != dataBytes)
    return Status::error(path + ": holds " + std::to_string(size) +
                         " bytes of weights, but the artifact's weight "
                         "layout needs " +
                         std::to_string(dataBytes) + kRemedy);
  if (fileBytes != kWeightsHeaderBytes + size)
    return Status::error(path + ": " + std::to_string(fileBytes) +
                         " bytes, but its header says " +
                         std::to_string(kWeightsHeaderBytes) + " + " +
                         std::to_string(size) +
                         (fileBytes < kWeightsHeaderBytes + size ? " (cut short?)"
                                                                 : " (bytes appended?)") +
                         kRemedy);
  std::string fileId = hex(p + kIdOffset, kIdBytes);
  if (fileId != id)
    return Status::error(
        path + ": was written for another artifact (" +
        (id.empty() ? "this one was compiled without weights"
                    : "weights id " + fileId + ", the artifact's is " + id) +
        ")" + kRemedy);
  return Status::success();
}

} // namespace cohere2c
