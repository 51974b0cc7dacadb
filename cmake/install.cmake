# Install rules: the public headers, the static library and a CMake package, so that
#   find_package(attn CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE attn::attn)
# works from the install prefix as add_subdirectory(attention-wasm) does from a source tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ATTN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/attn"
    CACHE STRING "Where attnConfig.cmake is installed, relative to the prefix")

install(TARGETS attn EXPORT attnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Only the public API (cpp/include); cpp/src's internal headers stay private.
install(DIRECTORY cpp/include/attn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(EXPORT attnTargets NAMESPACE attn:: DESTINATION ${ATTN_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/attnConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/attnConfig.cmake
  INSTALL_DESTINATION ${ATTN_INSTALL_CMAKEDIR})
# find_package(attn 0.1) accepts any 0.x >= 0.1 and refuses 1.x: a major version may break the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/attnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/attnConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/attnConfigVersion.cmake
        DESTINATION ${ATTN_INSTALL_CMAKEDIR})
