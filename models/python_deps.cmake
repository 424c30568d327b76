# Checks that ONYX_PYTHON (the venv of scripts/install-deps.sh) has the
# Python packages the model zoo and the OCR example use, and finds the
# PaddleOCR models that the rapidocr_onnxruntime package ships.
# Included by models/ and examples/ocr/, whichever comes first.
#
# Sets ONYX_PADDLE_DIR (cache, internal): the folder holding
# ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx and
# ch_ppocr_mobile_v2.0_cls_infer.onnx.
include_guard(GLOBAL)

# Importing torch takes seconds: the check runs once per build folder, again
# when ONYX_PYTHON changes or the models' folder is gone (venv rebuilt).
if(NOT ONYX_PYTHON_CHECKED STREQUAL ONYX_PYTHON
   OR NOT EXISTS "${ONYX_PADDLE_DIR}/ch_PP-OCRv4_rec_infer.onnx")
  set(why "")
  if(NOT EXISTS "${ONYX_PYTHON}")
    set(why "there is no ${ONYX_PYTHON}")
  else()
    # find_spec: where rapidocr_onnxruntime is, without running its import
    # (which loads OpenCV)
    execute_process(
      COMMAND "${ONYX_PYTHON}" -c [[
import importlib, importlib.util, os, sys
missing = []
for name in ("numpy", "onnx", "onnxruntime", "onnxscript", "torch", "torchvision"):
    try:
        importlib.import_module(name)
    except Exception:
        missing.append(name)
spec = importlib.util.find_spec("rapidocr_onnxruntime")
if spec is None:
    missing.append("rapidocr_onnxruntime")
if missing:
    sys.exit("it lacks " + ", ".join(missing))
print(os.path.join(list(spec.submodule_search_locations)[0], "models"))
]]
      RESULT_VARIABLE rc OUTPUT_VARIABLE paddle_dir ERROR_VARIABLE err
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      string(REGEX REPLACE ".*\n" "" err "${err}") # the last line says what
      set(why "${ONYX_PYTHON}: ${err}")
    elseif(NOT EXISTS "${paddle_dir}/ch_PP-OCRv4_rec_infer.onnx")
      set(why "rapidocr_onnxruntime has no PaddleOCR models in ${paddle_dir}")
    endif()
  endif()
  if(why)
    message(FATAL_ERROR "The model zoo (models/) and the OCR example need the Python packages "
      "of requirements.txt (onnx, onnxruntime, onnxscript, torch, torchvision, "
      "rapidocr-onnxruntime): ${why}. Run scripts/install-deps.sh, which makes them in "
      "${CMAKE_SOURCE_DIR}/.venv, or point -DONYX_PYTHON=... at a Python that has them.")
  endif()
  set(ONYX_PADDLE_DIR "${paddle_dir}" CACHE INTERNAL "PaddleOCR models of rapidocr_onnxruntime")
  set(ONYX_PYTHON_CHECKED "${ONYX_PYTHON}" CACHE INTERNAL "ONYX_PYTHON has the zoo's packages")
  message(STATUS "PaddleOCR models: ${ONYX_PADDLE_DIR}")
endif()
