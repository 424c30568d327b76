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
# What is registered: all twelve variants (three models, two sizes, two
# exporters). The small ones (256 px, 2-7 MiB) export in seconds; the
# default ones (640 px, 300 queries; 120 MiB for D-FINE, 165 MiB for the
# RT-DETRs) in 5-30 s each on an idle 2-core machine, plus their checks.
# The zoo is made once per CI run: scripts/test.sh points the sanitizer
# build at the Release build's zoo. Reference cases (batch 1 and 2): every
# variant except D-FINE at the default size, which is ill-conditioned with
# random weights (see ILL_CONDITIONED in detectors.py) and gets its
# `onyx run` test only; the default RT-DETRs compare their queries as sets
# of rows (row_set), since near-tied TopK scores may swap two of them.
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
set(detector_small_cases "")
foreach(c ${detector_cases})
  if(c MATCHES "_small")
    list(APPEND detector_small_cases ${c})
  endif()
endforeach()
onyx_zoo_add_cases(CASES ${detector_cases} FILES ${detector_files}
  CLI_MODELS ${detector_registered}
  ORT_SAVED_MODELS ${detector_small_files} ORT_SAVED_CASES ${detector_small_cases})

if(BUILD_TESTING)
  # The zoo's fixture now also makes these exports: give it their time.
  get_test_property(models.zoo TIMEOUT zoo_timeout)
  if(zoo_timeout)
    math(EXPR zoo_timeout "${zoo_timeout} + 900")
    set_tests_properties(models.zoo PROPERTIES TIMEOUT ${zoo_timeout})
  endif()
endif()
