//===- WeightSourceTest.cpp - Weights read in chunks of rows --------------===//
//
// The cuda executor streams every source to the device in chunks of rows
// (WeightSource::readRows); the host target reads the whole buffer
// (hostBuffer). Both must give the bytes of the layout: for each source
// (OUT.weights as the compiler packed it, the checkpoint converted as it
// loads, seeded random weights), rows read in chunks of 3 equal the whole
// buffer, scales included, and the checkpoint converted at load equals what
// the compiler wrote into OUT.weights.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "Weights.h"

#include <gtest/gtest.h>

#include <cstring>

namespace cohere2c::test {
namespace {

struct Case {
  std::string model, artifact;
};

class WeightSourceTest : public ::testing::TestWithParam<Case> {
protected:
  void SetUp() override {
    const Case &c = GetParam();
    std::string path = std::string(COHERE2C_TEST_ARTIFACT_DIR) + "/" + c.artifact;
    auto loaded = LoadedArtifact::load(path + ".so");
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    artifact = std::move(*loaded);
    weightsPath = path + ".weights";
    checkpointDir = std::string(COHERE2C_TEST_DATA_DIR) + "/models/" + c.model;
  }

  /// Every entry read in chunks of 3 rows equals `whole` there.
  static void expectChunksEqualWhole(const WeightSource &source, const char *whole) {
    const WeightLayout &layout = source.layout();
    for (const WeightEntry &entry : layout.entries) {
      if (layout.isScale(entry))
        continue;
      int64_t cols = entry.shape.back(), rowBytes = cols * dtypeSize(entry.dtype);
      int64_t rows = entry.rows();
      const WeightEntry *scaleEntry = layout.scaleOf(entry);
      std::vector<char> values(3 * rowBytes);
      std::vector<float> scales(3);
      for (int64_t r = 0; r < rows; r += 3) {
        int64_t end = std::min(rows, r + 3);
        Status s = source.readRows(entry, r, end, values.data(), scales.data());
        ASSERT_TRUE(s.ok()) << s.message();
        ASSERT_EQ(std::memcmp(values.data(), whole + entry.offset + r * rowBytes,
                              (end - r) * rowBytes),
                  0)
            << source.description() << ": " << entry.name << " rows " << r << "-" << end;
        if (scaleEntry)
          ASSERT_EQ(std::memcmp(scales.data(), whole + scaleEntry->offset + r * 4,
                                (end - r) * 4),
                    0)
              << source.description() << ": " << entry.name << "_scale rows " << r;
      }
    }
  }

  std::unique_ptr<LoadedArtifact> artifact;
  std::string weightsPath, checkpointDir;
};

TEST_P(WeightSourceTest, ChunksOfRowsEqualTheWholeBuffer) {
  const Manifest &manifest = artifact->manifest();
  auto file = WeightSource::weightsFile(weightsPath, manifest);
  auto checkpoint = WeightSource::checkpoint(checkpointDir, manifest);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  std::unique_ptr<WeightSource> random = WeightSource::random(7, manifest);
  for (const WeightSource *source : {file->get(), checkpoint->get(), random.get()}) {
    auto whole = source->hostBuffer();
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    ASSERT_EQ((*whole)->size(), manifest.weights.totalBytes);
    expectChunksEqualWhole(*source, static_cast<const char *>((*whole)->data()));
  }
  const WeightBuffer *packed = *(*file)->hostBuffer(), *converted = *(*checkpoint)->hostBuffer();
  EXPECT_EQ(std::memcmp(packed->data(), converted->data(), manifest.weights.totalBytes), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Artifacts, WeightSourceTest,
    ::testing::Values(Case{"tiny-cohere2", "tiny-cohere2-f32"},
                      Case{"tiny-cohere2-bf16", "tiny-cohere2-bf16-cuda-bf16"},
                      Case{"tiny-cohere2-bf16", "tiny-cohere2-bf16-cuda-fp8-rowwise"},
                      Case{"tiny-cohere2", "tiny-cohere2-fp8-rowwise"}),
    [](const ::testing::TestParamInfo<Case> &info) {
      std::string name = info.param.artifact;
      for (char &c : name)
        if (!isalnum((unsigned char)c))
          c = '_';
      return name;
    });

} // namespace
} // namespace cohere2c::test
