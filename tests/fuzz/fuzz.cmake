# tempest_fuzz(NAME <name> SOURCES ... LIBS ...): a libFuzzer target fuzz_<name>
# whose corpus is tests/fuzz/corpus/<name>/. Only the `fuzz` preset
# (TEMPEST_FUZZ=ON, clang) builds them; elsewhere the call does nothing, so the
# release and debug builds are unaffected. The preset's CMAKE_CXX_FLAGS
# instrument every library with -fsanitize=fuzzer-no-link,address,undefined;
# the target links libFuzzer's main. Each target is also a ctest entry
# fuzz_<name>_corpus (label `fuzz`) that replays its corpus once (-runs=0).
set(TEMPEST_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
if(TEMPEST_FUZZ AND NOT TARGET tempest_fuzz_targets)
  add_custom_target(tempest_fuzz_targets)
endif()

function(tempest_fuzz)
  if(NOT TEMPEST_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBS" ${ARGN})
  add_executable(fuzz_${ARG_NAME} ${ARG_SOURCES} ${TEMPEST_FUZZ_DIR}/quiet.cc)
  target_link_libraries(fuzz_${ARG_NAME} PRIVATE tempest_warnings ${ARG_LIBS} spdlog::spdlog
                        protobuf::libprotobuf)
  target_include_directories(fuzz_${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_options(fuzz_${ARG_NAME} PRIVATE -fsanitize=fuzzer)
  add_dependencies(tempest_fuzz_targets fuzz_${ARG_NAME})
  add_test(NAME fuzz_${ARG_NAME}_corpus
           COMMAND fuzz_${ARG_NAME} -runs=0 ${TEMPEST_FUZZ_DIR}/corpus/${ARG_NAME})
  set_tests_properties(fuzz_${ARG_NAME}_corpus PROPERTIES LABELS fuzz TIMEOUT 120)
endfunction()
