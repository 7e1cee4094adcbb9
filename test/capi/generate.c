/*===- generate.c - The runtime's C API, from C11 -------------------------===*
 *
 *   cohere2c-capi-generate ARTIFACT.so PROMPT_IDS EXPECTED_IDS
 *
 * Loads a host artifact with the weights file beside it, generates
 * greedily (EOS ignored) from PROMPT_IDS ("5,61,53") as many tokens as
 * EXPECTED_IDS holds, and exits 0 only if they are EXPECTED_IDS (the
 * float64 reference model's greedy tokens). Before that it checks that bad
 * input comes back as a status with a message, never a crash: a missing
 * artifact (the message names the file), a NULL out parameter, an engine
 * before weights, text calls on an artifact without a tokenizer, and a
 * prompt id outside the vocabulary.
 *
 *===----------------------------------------------------------------------===*/

#include "cohere2c/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void fail(const char *what, cohere2c_status_t status) {
  fprintf(stderr, "FAIL: %s: %s\n", what, cohere2c_status_message(status));
  cohere2c_status_free(status);
  ++failures;
}

/* Frees `status`, which must be an error with `code` whose message
 * contains `needle`. */
static void expect_error(const char *what, cohere2c_status_t status,
                         cohere2c_status_code_t code, const char *needle) {
  if (cohere2c_status_is_ok(status)) {
    fprintf(stderr, "FAIL: %s: succeeded\n", what);
    ++failures;
    return;
  }
  if (cohere2c_status_code(status) != code ||
      !strstr(cohere2c_status_message(status), needle)) {
    fprintf(stderr,
            "FAIL: %s: code %d, message '%s' (expected code %d and '%s')\n",
            what, (int)cohere2c_status_code(status),
            cohere2c_status_message(status), (int)code, needle);
    ++failures;
  }
  cohere2c_status_free(status);
}

/* "5,61,53" into ids; returns the count, or 0 (and says why) if `text` is
 * not such a list or holds more than `capacity` ids. */
static size_t parse_ids(const char *text, int32_t *ids, size_t capacity) {
  size_t count = 0;
  for (const char *p = text; *p;) {
    char *end = NULL;
    long id = strtol(p, &end, 10);
    if (end == p || count == capacity || (*end != ',' && *end != '\0')) {
      fprintf(stderr, "not a list of ids: %s\n", text);
      return 0;
    }
    ids[count++] = (int32_t)id;
    p = *end ? end + 1 : end;
  }
  return count;
}

static void check_bad_input(const char *artifact_path) {
  cohere2c_artifact_t *artifact = NULL;
  expect_error(
      "open a missing artifact",
      cohere2c_artifact_open("/nonexistent/missing-model.so", &artifact),
      COHERE2C_STATUS_INVALID_ARGUMENT, "missing-model.so");
  if (artifact) {
    fprintf(stderr, "FAIL: a failed open set its out parameter\n");
    ++failures;
  }
  expect_error("open with a NULL out parameter",
               cohere2c_artifact_open(artifact_path, NULL),
               COHERE2C_STATUS_INVALID_ARGUMENT, "out_artifact");

  cohere2c_status_t status = cohere2c_artifact_open(artifact_path, &artifact);
  if (!cohere2c_status_is_ok(status)) {
    fail("open", status);
    return;
  }
  cohere2c_engine_t *engine = NULL;
  expect_error("an engine before weights",
               cohere2c_engine_create(artifact, NULL, &engine),
               COHERE2C_STATUS_FAILED_PRECONDITION, "no weights");
  cohere2c_text_t *text = NULL;
  /* The test models are compiled from folders without tokenizer.json. */
  expect_error("text without a tokenizer",
               cohere2c_artifact_text(artifact, &text),
               COHERE2C_STATUS_FAILED_PRECONDITION, "no tokenizer");
  cohere2c_engine_options_t options;
  cohere2c_engine_options_initialize(&options);
  options.block_size = 0;
  status = cohere2c_artifact_load_weights(artifact, NULL);
  if (!cohere2c_status_is_ok(status))
    fail("load weights", status);
  expect_error("block_size 0",
               cohere2c_engine_create(artifact, &options, &engine),
               COHERE2C_STATUS_INVALID_ARGUMENT, "block_size");
  cohere2c_artifact_release(artifact);
}

/* Generates from `prompt` on the artifact at `path`; the tokens go to
 * `out` (room for `count`), and the number generated is returned (0 on
 * error, reported). */
static size_t generate(const char *path, const int32_t *prompt,
                       size_t prompt_length, int32_t *out, size_t count) {
  cohere2c_artifact_t *artifact = NULL;
  cohere2c_engine_t *engine = NULL;
  cohere2c_request_t *request = NULL;
  size_t generated = 0;
  cohere2c_status_t status = cohere2c_artifact_open(path, &artifact);
  if (cohere2c_status_is_ok(status))
    status = cohere2c_artifact_load_weights(artifact, NULL);
  cohere2c_engine_options_t engine_options;
  cohere2c_engine_options_initialize(&engine_options);
  engine_options.ignore_eos = true; /* the reference ignores EOS */
  if (cohere2c_status_is_ok(status))
    status = cohere2c_engine_create(artifact, &engine_options, &engine);
  cohere2c_request_options_t options;
  cohere2c_request_options_initialize(&options); /* greedy */
  options.id = "reference";
  options.prompt_ids = prompt;
  options.prompt_length = prompt_length;
  options.max_new_tokens = (int64_t)count;
  if (cohere2c_status_is_ok(status)) {
    /* A bad request is refused, naming it, and leaves the engine usable. */
    int32_t outside = 1 << 30;
    cohere2c_request_options_t bad = options;
    bad.id = "outside";
    bad.prompt_ids = &outside;
    bad.prompt_length = 1;
    expect_error("a prompt id outside the vocabulary",
                 cohere2c_engine_submit(engine, &bad, &request),
                 COHERE2C_STATUS_INVALID_ARGUMENT, "request outside");
    status = cohere2c_engine_submit(engine, &options, &request);
  }
  cohere2c_request_state_t state = COHERE2C_REQUEST_IN_FLIGHT;
  while (cohere2c_status_is_ok(status) && state == COHERE2C_REQUEST_IN_FLIGHT) {
    status = cohere2c_engine_step(engine);
    if (cohere2c_status_is_ok(status))
      status = cohere2c_request_state(request, &state);
  }
  const int32_t *ids = NULL;
  if (cohere2c_status_is_ok(status))
    status = cohere2c_request_generated_ids(request, &ids, &generated);
  if (cohere2c_status_is_ok(status) && generated <= count)
    memcpy(out, ids, generated * sizeof(int32_t));
  if (!cohere2c_status_is_ok(status)) {
    fail("generate", status);
    generated = 0;
  }
  /* Released in the order of creation: each handle keeps what it needs. */
  cohere2c_artifact_release(artifact);
  cohere2c_engine_release(engine);
  cohere2c_request_release(request);
  return generated;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s ARTIFACT.so PROMPT_IDS EXPECTED_IDS\n", argv[0]);
    return 2;
  }
  enum { kMaxIds = 4096 };
  static int32_t prompt[kMaxIds], expected[kMaxIds], generated[kMaxIds];
  size_t prompt_length = parse_ids(argv[2], prompt, kMaxIds);
  size_t expected_length = parse_ids(argv[3], expected, kMaxIds);
  if (!prompt_length || !expected_length)
    return 2;

  check_bad_input(argv[1]);
  size_t count =
      generate(argv[1], prompt, prompt_length, generated, expected_length);
  if (count != expected_length) {
    fprintf(stderr, "FAIL: %zu tokens generated, %zu expected\n", count,
            expected_length);
    ++failures;
  }
  for (size_t i = 0; i < count && i < expected_length; ++i)
    if (generated[i] != expected[i]) {
      fprintf(stderr, "FAIL: token %zu is %d, the reference's %d\n", i,
              (int)generated[i], (int)expected[i]);
      ++failures;
      break;
    }
  if (failures)
    return 1;
  printf("%zu tokens equal the reference's\n", count);
  return 0;
}
