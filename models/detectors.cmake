# D-FINE, RT-DETR and RT-DETRv2 from Hugging Face transformers in the model
# zoo (models/detectors.py): the detectors of the bug reports this project
# started from, built from their configuration classes with random seeded
# weights, exported by PyTorch with a dynamic batch axis, and compared with
# ONNX Runtime at batch 1 and 2 (cases VARIANT_b1, VARIANT_b2).
#
# Included at the end of models/CMakeLists.txt, which defines ONYX_PYTHON,
# ONYX_ZOO_DIR, the zoo and zoo_references targets and
# onyx_zoo_add_cases().
#
# What is registered, and why (CI: 2 cores, 90 minutes for two full builds
# and all tests, and every build folder makes its own zoo). CPU seconds to
# build, calibrate and export one variant, measured with PyTorch 2.15 on a
# shared 2-core machine (wall time there was 1-3 times as much):
#   small (256 px, 64 wide, 2 decoder layers; 2-7 MiB): 10-35 s each; all
#     six (three models, two exporters) are registered, with their cases.
#   default (the configuration classes' defaults, 640 px, 300 queries; 120
#     MiB for D-FINE, 165 MiB for RT-DETR and v2): 55-80 s each, plus a
#     minute of checks. Registered: D-FINE and RT-DETR through the
#     TorchScript exporter at opset 17, the opset of the bug reports, and
#     D-FINE through the torch.export-based one (opset 20): at this size its
#     optimizer leaves the anchors and position embeddings to be computed
#     in the graph, with ScatterElements and ReduceMin (at opset 20) that
#     no other variant here has. RT-DETRv2 differs from RT-DETR only in its
#     decoder, which the small variants cover. That is about 5 minutes and
#     410 MiB per build folder; detectors.py makes the other three on
#     request (detectors.py ZOO_DIR rtdetr_default_dynamo ...).
# The default variants have only their `onyx run` test until the model test
# can compare their outputs as sets of rows (see ORDER_FREE_KIND in
# detectors.py); their cases appear by themselves when it can.
if(NOT COMMAND onyx_zoo_add_cases)
  message(FATAL_ERROR "models/detectors.cmake needs onyx_zoo_add_cases() from "
    "models/CMakeLists.txt")
endif()

# Variants and reference cases from detectors.py itself, so that the lists
# cannot drift (read at configure time: configure again when it changes).
foreach(what registered cases)
  execute_process(
    COMMAND ${ONYX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/detectors.py --list ${what}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "models/detectors.py --list ${what} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" detector_${what} "${out}")
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/detectors.py ${CMAKE_CURRENT_SOURCE_DIR}/make_references.py)

set(detector_files "")
foreach(v ${detector_registered})
  list(APPEND detector_files ${ONYX_ZOO_DIR}/${v}.onnx)
endforeach()
foreach(c ${detector_cases})
  list(APPEND detector_files ${ONYX_ZOO_DIR}/cases/${c}.json)
endforeach()

# One command for all variants: the exports run one after another (each
# takes all the cores it gets and up to a few GiB), PyTorch and
# transformers are imported once, and detectors.py skips (and touches)
# every variant whose file is up to date, so a change to the script
# re-exports only what it changes.
add_custom_command(
  OUTPUT ${detector_files}
  COMMAND ${ONYX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/detectors.py ${ONYX_ZOO_DIR}
    ${detector_registered}
  DEPENDS detectors.py zoo_common.py make_references.py
  COMMENT "Exporting D-FINE and RT-DETR (transformers) for the zoo"
  VERBATIM)
add_custom_target(zoo_detectors DEPENDS ${detector_files})
# zoo_references (through zoo) waits for this target, so that a parallel
# build does not run the command twice: the manifest depends on its files too
add_dependencies(zoo zoo_detectors)

# Tests models.CASE on the zoo's manifest (fixture onyx_zoo), and
# models.cli.VARIANT: `onyx run` with the CLI's random inputs on every
# registered variant (for the default sizes, for now their only test: see
# ORDER_FREE_KIND in detectors.py).
# ONNX Runtime's saved optimized graphs of the small variants too (the
# default sizes would add minutes of ORT sessions and 600 MiB of files)
set(detector_small_files "")
foreach(v ${detector_registered})
  if(v MATCHES "_small")
    list(APPEND detector_small_files ${ONYX_ZOO_DIR}/${v}.onnx)
  endif()
endforeach()
onyx_zoo_add_cases(CASES ${detector_cases} FILES ${detector_files}
  CLI_MODELS ${detector_registered}
  ORT_SAVED_MODELS ${detector_small_files} ORT_SAVED_CASES ${detector_cases})

if(BUILD_TESTING)
  # The zoo's fixture now also makes these exports: give it their time.
  get_test_property(models.zoo TIMEOUT zoo_timeout)
  if(zoo_timeout)
    math(EXPR zoo_timeout "${zoo_timeout} + 900")
    set_tests_properties(models.zoo PROPERTIES TIMEOUT ${zoo_timeout})
  endif()
endif()
